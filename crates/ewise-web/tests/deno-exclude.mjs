// Preloaded by scripts/deno-test.sh (`deno test --preload`) before the package's own tests
// (tests/*.test.mjs, written for node:test, whose tests Deno registers through Deno.test):
// the tests named in EWISE_DENO_EXCLUDE, one "NAME<TAB>REASON" a line, are registered as
// ignored, each announced with its reason, and every other test runs as written.

const excluded = new Map(
  (Deno.env.get("EWISE_DENO_EXCLUDE") ?? "")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const tab = line.indexOf("\t");
      if (tab < 1) throw new Error(`EWISE_DENO_EXCLUDE: a line that is not "NAME<TAB>REASON": ${JSON.stringify(line)}`);
      return [line.slice(0, tab), line.slice(tab + 1)];
    }),
);

const register = Deno.test;

/** Deno.test, with the excluded tests registered as ignored. */
function test(...args) {
  const name = typeof args[0] === "string" ? args[0] : args[0]?.name;
  const reason = excluded.get(name);
  if (reason === undefined) return register.apply(this, args);
  console.log(`deno-test: not run under Deno: ${JSON.stringify(name)}: ${reason}`);
  if (typeof args[0] === "object") return register.call(this, { ...args[0], ignore: true });
  return register.call(this, { name, fn: args.at(-1), ignore: true });
}

Deno.test = Object.assign(test, register);
