# Included from CMakeLists.txt when EMSCRIPTEN: the npm package's WASM module.
#   build dir: onemodel.mjs (ES6 factory, default export createOneModel) + onemodel.wasm
#   copied after every link into js/dist/ (gitignored).
# Exports: every EMSCRIPTEN_KEEPALIVE function of wasm/api.c (the omw_* ABI), _malloc, _free;
# on the module object: HEAP8/16/32, HEAPU8/16/32, HEAPF32/64, HEAP64/HEAPU64 (BigInt64 views,
# from WASM_BIGINT), UTF8ToString, stringToUTF8, lengthBytesUTF8. int64 arguments and results
# cross the boundary as BigInt. Pointers >= 2 GiB arrive negative: apply >>> 0 in JS.
# Imports: js/runtime.js sets Module.omSink(ctx, ptr, len), which omw_traced_write's EM_JS
# function calls for every chunk of a traced model's .onnx bytes.
add_executable(onemodel_wasm ${CMAKE_SOURCE_DIR}/wasm/api.c)
set_target_properties(onemodel_wasm PROPERTIES OUTPUT_NAME onemodel SUFFIX ".mjs")
target_link_libraries(onemodel_wasm PRIVATE onemodel)
target_link_options(onemodel_wasm PRIVATE
  -sMODULARIZE=1 -sEXPORT_ES6=1 -sEXPORT_NAME=createOneModel
  -sENVIRONMENT=web,worker
  -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=4GB -sABORTING_MALLOC=0
  -sWASM_BIGINT=1
  # -O0 (Debug) turns ASSERTIONS on, and with ENVIRONMENT=web,worker the assertion build throws
  # "environment detection error" when Node imports the module; Release builds have none.
  -sASSERTIONS=0
  "-sEXPORTED_FUNCTIONS=_malloc,_free"
  "-sEXPORTED_RUNTIME_METHODS=UTF8ToString,stringToUTF8,lengthBytesUTF8")

set(OM_JS_DIST ${CMAKE_SOURCE_DIR}/js/dist)
add_custom_command(TARGET onemodel_wasm POST_BUILD
  COMMAND ${CMAKE_COMMAND} -E make_directory ${OM_JS_DIST}
  COMMAND ${CMAKE_COMMAND} -E copy_if_different
          $<TARGET_FILE:onemodel_wasm> $<TARGET_FILE_DIR:onemodel_wasm>/onemodel.wasm ${OM_JS_DIST}/
  COMMENT "copy onemodel.mjs + onemodel.wasm -> js/dist/"
  VERBATIM)
