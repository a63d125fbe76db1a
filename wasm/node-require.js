// --pre-js of the threaded module (wasm/link.cmake): Emscripten 3.1.6's Node code calls
// require() and reads __dirname, which an ES module does not have. js/runtime.js passes them
// in (Module.omRequire from module.createRequire, Module.omDirname); in a pthread worker the
// worker script (CommonJS under Node) has put its require on the global object. In a browser
// both stay undefined and the glue never reads them.
var require = Module['omRequire'] || (typeof globalThis.require == 'function' ? globalThis.require : undefined);
var __dirname = Module['omDirname'];
