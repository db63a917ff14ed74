// Preloaded (node --import) for the CLI, server and hostile-workspace suites: no property can be added to the
// built-in prototypes, so any code path that writes one (prototype pollution) throws or fails there instead of
// silently changing every object. Sealed rather than frozen: frozen prototypes also forbid assigning an own
// `toString` or `name` to an ordinary object (the "override mistake"), which Node itself and vscode-jsonrpc do.
const prototypes = [
  Object.prototype, Array.prototype, Function.prototype, String.prototype, Number.prototype, Boolean.prototype,
  RegExp.prototype, Map.prototype, Set.prototype, Promise.prototype, Error.prototype, Date.prototype,
];
for (const p of prototypes) Object.seal(p);
globalThis.__shardlensPrototypesSealed = true;
