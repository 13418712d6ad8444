// The CommonJS entry of the npm package `ewise` (package.json "exports", "require").
// Where Node can require() an ES module (process.features.require_module: Node 20.19+,
// 22.12+), it is ewise.js itself, the very module `import` gives: one module, one
// WebAssembly instance, one init() for both. Elsewhere (Node 20 before 20.19, 22 before
// 22.12) it is ewise.commonjs.cjs, the same code converted to CommonJS by
// scripts/web-build.sh; a program that both imports and requires ewise there holds two
// copies, each of which needs its own init(), and an error of one is no instance of the
// other's classes.
"use strict";

module.exports =
  typeof process === "object" && process !== null && process.features?.require_module === true
    ? require("./ewise.js")
    : require("./ewise.commonjs.cjs");
