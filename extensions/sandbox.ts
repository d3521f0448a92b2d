// One Lua 5.4 VM (wasmoon, WebAssembly) per extension call, sandboxed: no io, os (but
// time/clock/date), package, require, dofile, loadfile, debug or string.dump; chunks load
// as text only (no bytecode). A count hook stops the VM past its deadline, in coroutines
// too, and a memory cap refuses allocations beyond the limit.
import { LuaFactory, type LuaEngine } from 'wasmoon';

export interface SandboxLimits {
  timeoutMs: number;
  memoryBytes: number;
}

/** Instructions between deadline checks. */
const HOOK_EVERY = 1000;
export const TIMEOUT_MESSAGE = 'time limit exceeded';

const PRELUDE = `
local now, deadline, sethook = __now, __deadline, debug.sethook
local function guard() if now() > deadline then error("${TIMEOUT_MESSAGE}", 0) end end
sethook(guard, "", ${HOOK_EVERY})
local cocreate, resume, pack, unpack = coroutine.create, coroutine.resume, table.pack, table.unpack
coroutine.create = function(f) local co = cocreate(f) sethook(co, guard, "", ${HOOK_EVERY}) return co end
coroutine.wrap = function(f)
  local co = coroutine.create(f)
  return function(...)
    local r = pack(resume(co, ...))
    if not r[1] then error(r[2], 0) end
    return unpack(r, 2, r.n)
  end
end
local load = load
os = { time = os.time, clock = os.clock, date = os.date }
string.dump = nil
io, debug, package, require, dofile, loadfile, collectgarbage = nil, nil, nil, nil, nil, nil, nil
print = function() end
__now, __deadline = nil, nil
_G.load = function(chunk, name, _mode, env) return load(chunk, name, "t", env) end
`;

/** A fresh Lua VM with allocation tracking (needed for the memory cap); used for one call. */
export async function createSandboxEngine(): Promise<LuaEngine> {
  return new LuaFactory().createEngine({ traceAllocations: true, injectObjects: true });
}

/**
 * Runs trusted `driver` Lua after the sandbox prelude, in one chunk (so in one Lua thread,
 * which the hook watches), with `globals` set. The driver loads user code with `load`, so
 * user code never sees the prelude's locals (the hook, the unrestricted `load`). The
 * engine is closed afterwards: a VM serves one call.
 */
export async function runInSandbox<T>(lua: LuaEngine, limits: SandboxLimits, globals: Record<string, unknown>, driver: string): Promise<T> {
  try {
    lua.global.setMemoryMax(limits.memoryBytes);
    lua.global.set('__now', () => Date.now());
    lua.global.set('__deadline', Date.now() + limits.timeoutMs);
    for (const [k, v] of Object.entries(globals)) lua.global.set(k, v);
    return (await lua.doString(`${PRELUDE}\n${driver}`)) as T;
  } finally {
    lua.global.close();
  }
}
