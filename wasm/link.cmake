# Included from CMakeLists.txt when EMSCRIPTEN: the npm package's two WASM modules, from the same
# sources, both copied after every link into js/dist/ (gitignored):
#   onemodel.mjs + onemodel.wasm          one thread (ES6 factory, default export createOneModel)
#   onemodel-mt.mjs + onemodel-mt.wasm    threads: the library compiled with -pthread and
#     + onemodel-mt.worker.js             OM_THREADS (src/core/threads.c), shared memory, and
#     + package.json                      Emscripten's pthread worker script (a classic script,
#                                         CommonJS under Node: js/dist/package.json says so)
# js/runtime.js loads the threaded one in Node and in a cross-origin-isolated page.
# Exports: every EMSCRIPTEN_KEEPALIVE function of wasm/api.c (the omw_* ABI), _malloc, _free;
# on the module object: HEAP8/16/32, HEAPU8/16/32, HEAPF32/64, HEAP64/HEAPU64 (BigInt64 views,
# from WASM_BIGINT), UTF8ToString, stringToUTF8, lengthBytesUTF8. int64 arguments and results
# cross the boundary as BigInt. Pointers >= 2 GiB arrive negative: apply >>> 0 in JS.
# js/load.js compiles the .wasm itself (Module.instantiateWasm) from the URL wasm/locate.js (a
# --pre-js of both) reads out of the glue.
# Imports: js/runtime.js sets Module.omSink(ctx, ptr, len), which omw_traced_write's EM_JS
# function calls for every chunk of a traced model's .onnx bytes.
set(OM_WASM_LINK_OPTIONS
  -sMODULARIZE=1 -sEXPORT_ES6=1 -sEXPORT_NAME=createOneModel
  -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=4GB -sABORTING_MALLOC=0
  -sWASM_BIGINT=1
  # -O0 (Debug) turns ASSERTIONS on, and with ENVIRONMENT=web,worker the assertion build throws
  # "environment detection error" when Node imports the module; Release builds have none.
  -sASSERTIONS=0
  "-sEXPORTED_FUNCTIONS=_malloc,_free"
  "-sEXPORTED_RUNTIME_METHODS=UTF8ToString,stringToUTF8,lengthBytesUTF8")
set(OM_JS_DIST ${CMAKE_SOURCE_DIR}/js/dist)

# om_wasm_module(TARGET OUTPUT_NAME LIBRARY FILES...): links wasm/api.c against LIBRARY into
# OUTPUT_NAME.mjs (with the options above and the extra ones in OM_WASM_EXTRA) and copies FILES
# (names in the build dir) into js/dist/ after every link.
function(om_wasm_module target name lib)
  add_executable(${target} ${CMAKE_SOURCE_DIR}/wasm/api.c)
  set_target_properties(${target} PROPERTIES OUTPUT_NAME ${name} SUFFIX ".mjs")
  target_link_libraries(${target} PRIVATE ${lib})
  target_link_options(${target} PRIVATE ${OM_WASM_LINK_OPTIONS} ${OM_WASM_EXTRA})
  set(files)
  foreach(f IN LISTS ARGN)
    list(APPEND files $<TARGET_FILE_DIR:${target}>/${f})
  endforeach()
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -E make_directory ${OM_JS_DIST}
    COMMAND ${CMAKE_COMMAND} -E copy_if_different ${files} ${OM_JS_DIST}/
    COMMENT "copy ${ARGN} -> js/dist/"
    VERBATIM)
endfunction()

set(OM_WASM_EXTRA -sENVIRONMENT=web,worker "SHELL:--pre-js ${CMAKE_SOURCE_DIR}/wasm/locate.js")
om_wasm_module(onemodel_wasm onemodel onemodel onemodel.mjs onemodel.wasm)
set_property(TARGET onemodel_wasm APPEND PROPERTY LINK_DEPENDS ${CMAKE_SOURCE_DIR}/wasm/locate.js)

# The threaded build. Every object of a shared-memory module needs the atomics feature, so the
# library and protobuf-c are compiled again with -pthread.
add_library(onemodel_mt STATIC ${OM_SOURCES} ${OM_ONNX_PB_C})
target_include_directories(onemodel_mt PUBLIC ${CMAKE_SOURCE_DIR}/src ${OM_GEN_DIR})
target_compile_definitions(onemodel_mt PRIVATE OM_THREADS)
add_library(protobuf-c-mt STATIC ${PROTOBUF_C_SRC}/protobuf-c/protobuf-c.c)
target_include_directories(protobuf-c-mt SYSTEM PUBLIC ${PROTOBUF_C_SRC})
target_compile_options(protobuf-c-mt PRIVATE -Wno-error -Wno-unused-but-set-variable)
target_link_libraries(onemodel_mt PUBLIC protobuf-c-mt)
foreach(t onemodel_mt protobuf-c-mt)
  target_compile_options(${t} PRIVATE -pthread)
endforeach()
# node joins the environments: in Node the pthreads are worker_threads (library_pthread.js's
# Node branch). The glue's Node code calls require and reads __dirname, which an ES module
# lacks: wasm/node-require.js (a --pre-js) takes them from js/runtime.js (Module.omRequire,
# Module.omDirname), or in a worker from the worker script's CommonJS scope. The pool holds
# Module.omWorkers workers, started before the factory resolves (pthread_create on a page's
# main thread cannot wait for a worker to load); beyond them pthread_create fails (STRICT=2)
# and src/core/threads.c runs on the threads it has. NODEJS_CATCH_*=0: the glue's Node code would
# otherwise add process-wide uncaughtException and unhandledRejection listeners that rethrow, so
# loading the package would turn any error an application handles there into a crash.
set(OM_WASM_EXTRA -pthread -sENVIRONMENT=web,worker,node
  "-sPTHREAD_POOL_SIZE=Module.omWorkers" -sPTHREAD_POOL_SIZE_STRICT=2
  -sNODEJS_CATCH_EXIT=0 -sNODEJS_CATCH_REJECTION=0
  # SHELL: keeps both --pre-js (CMake drops a repeated option)
  "SHELL:--pre-js ${CMAKE_SOURCE_DIR}/wasm/node-require.js" "SHELL:--pre-js ${CMAKE_SOURCE_DIR}/wasm/locate.js")
om_wasm_module(onemodel_mt_wasm onemodel-mt onemodel_mt onemodel-mt.mjs onemodel-mt.wasm onemodel-mt.worker.js)
set_property(TARGET onemodel_mt_wasm APPEND PROPERTY LINK_DEPENDS ${CMAKE_SOURCE_DIR}/wasm/node-require.js ${CMAKE_SOURCE_DIR}/wasm/locate.js)
file(WRITE ${CMAKE_BINARY_DIR}/dist-package.json "{\"type\": \"commonjs\"}\n")
add_custom_command(TARGET onemodel_mt_wasm POST_BUILD
  COMMAND ${CMAKE_COMMAND} -E copy_if_different ${CMAKE_BINARY_DIR}/dist-package.json ${OM_JS_DIST}/package.json
  VERBATIM)
