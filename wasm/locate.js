// --pre-js of both modules (wasm/link.cmake): js/load.js fetches, checks and compiles the .wasm
// itself (Module.instantiateWasm), so that a failed load says what was served and how to fix it,
// from the URL the glue would have fetched: Module.locateFile's answer, or
// new URL('<name>.wasm', import.meta.url), which Vite rewrites to its asset. wasmBinaryFile is
// the glue's variable holding that URL; it is set before the glue calls instantiateWasm.
Module['omWasmUrl'] = function () { return wasmBinaryFile; };
