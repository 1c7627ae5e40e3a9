// maxmem as OpenClaw's memory plugin (the memory slot). Plain ESM JavaScript: no build
// step, no npm dependency. Every call shells out to the maxmem command written in the
// plugin's config (an absolute argv, so a Gateway whose PATH lacks maxmem still finds
// it), within a bounded wait (timeoutMs), and fails open: the turn goes on without memory.
// A hook's budget (maxmem hook --budget: the seconds it may take before it gives up and
// prints nothing) is what is left of that wait less BUDGET_MARGIN_MS, so the hook keeps
// to the wait the user allowed, and logs why when it cannot.
//
//   before_prompt_build  the memories relevant to the user's prompt, in the prompt
//                        (maxmem hook user-prompt: the warm recall server's socket when
//                        it answers, else the command, which starts that server), and
//                        the boot brief in the system prompt, built once per session
//   memory_search,       memory-core's tool names and parameters, answered by
//   memory_get           maxmem search --json and maxmem get --json
//   agent_end            capture of the conversation (maxmem hook stop), detached; and
//                        when the workspace's MEMORY.md, USER.md or memory/*.md changed
//                        since the last import, maxmem import --from openclaw, detached
//
// Installed and configured by  maxmem setup openclaw ; removed by  --uninstall .
import { execFile, spawn } from "node:child_process";
import { appendFileSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createConnection } from "node:net";
import { definePluginEntry } from "openclaw/plugin-sdk/plugin-entry";

const HARNESS = ["--harness", "openclaw"];
const DEFAULT_TIMEOUT_MS = 10000;
// Of a wait, what a hook's budget leaves: the hook stops half a second past its budget
// (counted from its process's start), and node has to start it and read its answer.
const BUDGET_MARGIN_MS = 1000;
const MIN_BUDGET_SECONDS = 0.5; // maxmem's own floor for a hook's budget
const MAX_BUDGET_SECONDS = 600; // the most maxmem hook --budget takes
const WARM_SHARE = 0.4; // of the budget, the most spent on the warm server before the command (as the hook does)
const ACK = "ok\n"; // hooks/warm.py's word that the answer was read
const MAX_BRIEFS = 256; // sessions whose brief is kept (a Gateway lives for days)

function settings(raw) {
  const config = raw && typeof raw === "object" ? raw : {};
  const bin = Array.isArray(config.bin) ? config.bin.map(String)
    : typeof config.bin === "string" && config.bin ? [config.bin] : ["maxmem"];
  const argv = [...bin, ...(typeof config.db === "string" && config.db ? ["--db", config.db] : [])];
  const timeoutMs = Number.isInteger(config.timeoutMs) && config.timeoutMs >= 500
    ? config.timeoutMs : DEFAULT_TIMEOUT_MS;
  const warm = config.warm && typeof config.warm === "object" ? config.warm : {};
  return {
    argv, timeoutMs, warm, state: typeof config.state === "string" ? config.state : null,
    recall: config.recall !== false, brief: config.brief !== false, capture: config.capture !== false,
    import: config.import !== false,
  };
}

// A hook's budget in seconds for a wait of `waitMs`, to a tenth of a second.
function budgetFor(waitMs) {
  const seconds = Math.round((waitMs - BUDGET_MARGIN_MS) / 100) / 10;
  return Math.min(MAX_BUDGET_SECONDS, Math.max(MIN_BUDGET_SECONDS, seconds));
}

// `maxmem hook EVENT --harness openclaw --budget S`, waited for `waitMs` at most.
function runHook(cfg, event, input, waitMs = cfg.timeoutMs) {
  return run(cfg, ["hook", event, ...HARNESS, "--budget", String(budgetFor(waitMs))], input, waitMs);
}

// maxmem with `args`, `input` on stdin; resolves {ok, stdout, stderr}, never rejects.
function run(cfg, args, input, timeoutMs = cfg.timeoutMs) {
  return new Promise((resolve) => {
    let child;
    try {
      child = execFile(cfg.argv[0], [...cfg.argv.slice(1), ...args],
        { timeout: timeoutMs, killSignal: "SIGKILL", maxBuffer: 16 << 20, encoding: "utf8" },
        (error, stdout, stderr) => resolve({ ok: !error, stdout: stdout ?? "", stderr: stderr ?? "", error }));
    } catch (error) {
      resolve({ ok: false, stdout: "", stderr: String(error), error });
      return;
    }
    child.stdin?.on("error", () => {});
    child.stdin?.end(input ?? "");
  });
}

// The warm recall server's answer (hooks/warm.py's protocol: one JSON line each way),
// or null when none answers in `waitMs` (the request's `wait` is a little less: the
// server sends nothing later than that, so what it records as shown was printed). The
// request's code stamp is the modification time of the installed maxmem's warm.py, in
// nanoseconds: a server of another install says "retry" and the command takes over. Once
// it has an answer, the plugin says so (ACK): only then does the server record what the
// session was shown, so the next prompt is not shown it again.
function askWarm(cfg, stdin, waitMs) {
  const { socket, stamp } = cfg.warm;
  if (!socket || !stamp) return Promise.resolve(null);
  let code;
  try {
    code = statSync(stamp, { bigint: true }).mtimeNs.toString();
    statSync(socket);
  } catch {
    return Promise.resolve(null);
  }
  return new Promise((resolve) => {
    const chunks = [];
    let done = false;
    const finish = (value) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (value && !value.retry && typeof value.stdout === "string") connection.end(ACK);
      else connection.destroy();
      resolve(value);
    };
    const timer = setTimeout(() => finish(null), waitMs);
    const connection = createConnection({ path: socket });
    connection.on("error", () => finish(null));
    connection.on("connect", () => {
      // JSON.stringify cannot hold a 64-bit integer: the stamp goes in as written.
      const body = JSON.stringify({ harness: "openclaw", stdin, budget_tokens: null, wait: (waitMs / 1000) * 0.9 });
      connection.write(`{"code": ${code}, ${body.slice(1)}\n`);
    });
    connection.on("data", (chunk) => {
      chunks.push(chunk);
      if (chunk.includes(10)) finish(parse(Buffer.concat(chunks).toString("utf8")));
    });
    connection.on("end", () => finish(parse(Buffer.concat(chunks).toString("utf8"))));
  }).then((answer) => (answer && !answer.retry && typeof answer.stdout === "string" ? answer : null));
}

function parse(text) {
  try {
    const value = JSON.parse(text);
    return value && typeof value === "object" ? value : null;
  } catch {
    return null;
  }
}

// The line maxmem's own hook would have logged, in its hook.log.
function logLine(cfg, answer, started, budget) {
  if (!cfg.warm.log) return;
  const took = ((Date.now() - started) / 1000).toFixed(2);
  const line = `hook user-prompt --harness openclaw: ${answer.line ?? ""} (warm socket, ${took} s, budget ${budget} s)`;
  try {
    appendFileSync(cfg.warm.log, `${new Date().toISOString()} ${answer.ok === false ? "FAIL" : "ok"} `
      + `${line.split(/\s+/).join(" ")}\n`, { mode: 0o600 });
  } catch {
    // a log that cannot be written is not an error
  }
}

// The memories for the prompt: from the warm server over its socket, within its share
// of the budget, else from the command, given what is left of the wait as its budget.
async function recallFor(cfg, stdin) {
  const started = Date.now();
  const budget = budgetFor(cfg.timeoutMs);
  const answer = await askWarm(cfg, stdin, budget * WARM_SHARE * 1000);
  if (answer) {
    logLine(cfg, answer, started, budget);
    return answer.stdout.trim();
  }
  const left = Math.max(500, cfg.timeoutMs - (Date.now() - started));
  const done = await runHook(cfg, "user-prompt", stdin, left);
  return done.ok ? done.stdout.trim() : "";
}

function firstUserText(event) {
  if (typeof event?.currentUserMessage === "string") return event.currentUserMessage;
  return typeof event?.prompt === "string" ? event.prompt : "";
}

function jsonResult(value) {
  return { content: [{ type: "text", text: JSON.stringify(value, null, 2) }], details: value };
}

function unavailable(error) {
  return jsonResult({ results: [], disabled: true, unavailable: true, error,
    warning: "maxmem did not answer", action: "run  maxmem doctor  on the Gateway's host" });
}

function searchHit(hit) {
  const memory = hit.memory ?? {};
  const text = [memory.title, memory.content].filter(Boolean).join(": ");
  return {
    path: `maxmem:${memory.id}`, startLine: 1, endLine: 1, score: hit.score,
    relevance: hit.relevance, snippet: text, source: "memory", citation: `maxmem#${memory.id}`,
    category: memory.category, kind: memory.kind, createdAt: memory.created_at,
  };
}

function memoryText(memory, from, lines) {
  const text = [memory.title ? `# ${memory.title}` : null, memory.content].filter(Boolean).join("\n\n");
  if (!from && !lines) return text;
  const all = text.split("\n");
  const start = Math.max(1, from ?? 1) - 1;
  return all.slice(start, lines ? start + lines : undefined).join("\n");
}

function searchTool(cfg) {
  return {
    name: "memory_search",
    label: "Memory search (maxmem)",
    description: "Search long-term memory (maxmem): decisions, preferences, past conversations and notes. "
      + "Returns the best hits with a path such as maxmem:12; read one whole with memory_get.",
    parameters: {
      type: "object", additionalProperties: false, required: ["query"],
      properties: {
        query: { type: "string", description: "What to look for, in plain words." },
        maxResults: { type: "integer", minimum: 1, description: "At most this many hits (default 6)." },
        minScore: { type: "number", description: "Leave out hits scoring below this (0-1)." },
        corpus: { type: "string", enum: ["memory", "wiki", "all", "sessions"],
          description: "maxmem holds one corpus: every value searches it." },
      },
    },
    async execute(_id, params) {
      const query = String(params?.query ?? "").trim();
      if (!query) return jsonResult({ results: [], provider: "maxmem", error: "query is empty" });
      // maxmem search takes at most 100000 hits: more asked is that many, not an error.
      const limit = Number.isInteger(params?.maxResults) && params.maxResults > 0
        ? Math.min(params.maxResults, 100000) : 6;
      // After "--" the query is words, never an option, whatever it starts with.
      const done = await run(cfg, ["search", "--limit", String(limit), "--json", "--", query]);
      const data = done.ok ? parse(done.stdout) : null;
      if (!data) return unavailable((done.stderr || "no answer").trim().split("\n").pop());
      const floor = typeof params?.minScore === "number" ? params.minScore : null;
      const results = (data.hits ?? []).map(searchHit).filter((hit) => floor === null || hit.score >= floor);
      return jsonResult({ results, provider: "maxmem", citations: "auto" });
    },
  };
}

function getTool(cfg) {
  return {
    name: "memory_get",
    label: "Memory get (maxmem)",
    description: "Read one memory whole by the path memory_search gave (maxmem:12), optionally some lines of it.",
    parameters: {
      type: "object", additionalProperties: false, required: ["path"],
      properties: {
        path: { type: "string", description: "maxmem:<id>, as memory_search returned it." },
        from: { type: "integer", minimum: 1, description: "The first line to return." },
        lines: { type: "integer", minimum: 1, description: "How many lines to return." },
        corpus: { type: "string", enum: ["memory", "wiki", "all"], description: "maxmem holds one corpus." },
      },
    },
    async execute(_id, params) {
      const path = String(params?.path ?? "");
      const found = /^(?:maxmem[:#])?(\d+)$/.exec(path.trim());
      if (!found) return jsonResult({ path, text: "", status: "not_found", error: "not a maxmem path (maxmem:<id>)" });
      const done = await run(cfg, ["get", found[1], "--json"]);
      const memory = done.ok ? parse(done.stdout) : null;
      if (!memory) {
        const reason = (done.stderr || "no answer").trim().split("\n").pop();
        return jsonResult({ path, text: "", status: /not found|no memory/i.test(reason) ? "not_found" : "error", error: reason });
      }
      return jsonResult({ path: `maxmem:${memory.id}`, text: memoryText(memory, params?.from, params?.lines), status: "ok" });
    },
  };
}

function promptSection({ availableTools }) {
  const tools = availableTools instanceof Set ? availableTools : new Set();
  const lines = ["## Memory Recall",
    "Long-term memory is maxmem. Memories relevant to each message are added above it as a `maxmem recall:` "
    + "block, and the boot brief is in this system prompt."];
  if (tools.has("memory_search")) {
    lines.push("Before answering about prior work, decisions, dates, people or preferences the recall block does "
      + "not cover, call memory_search, then memory_get for a whole memory. Cite hits as maxmem#<id>.");
  }
  lines.push("");
  return lines;
}

// session id -> the brief's text (or its pending promise), built once per session.
function briefs(cfg) {
  const cache = new Map();
  return (ctx) => {
    const key = ctx?.sessionId ?? ctx?.sessionKey;
    if (!key) return Promise.resolve("");
    if (!cache.has(key)) {
      if (cache.size >= MAX_BRIEFS) cache.delete(cache.keys().next().value);
      const stdin = JSON.stringify({ session_id: key, cwd: ctx.workspaceDir ?? null, source: "startup" });
      cache.set(key, runHook(cfg, "session-start", stdin)
        .then((done) => (done.ok ? done.stdout.trim() : "")));
    }
    return cache.get(key);
  };
}

// maxmem with `args`, in the background: the Gateway never waits for it.
function detached(cfg, args, input) {
  try {
    const child = spawn(cfg.argv[0], [...cfg.argv.slice(1), ...args],
      { stdio: ["pipe", "ignore", "ignore"], detached: true });
    child.on("error", () => {});
    child.stdin.on("error", () => {});
    child.stdin.end(input ?? "");
    child.unref();
  } catch {
    // maxmem must never break the Gateway
  }
}

function capture(cfg, ctx) {
  detached(cfg, ["hook", "stop", ...HARNESS], JSON.stringify({ session_id: ctx?.sessionId ?? null,
    session_key: ctx?.sessionKey ?? null, agent_id: ctx?.agentId ?? null, cwd: ctx?.workspaceDir ?? null,
    hook_event_name: "agent_end" }));
}

// The newest modification time of the memory files the user (or the agent) keeps in the
// workspace, in ms; 0 when there are none.
function memoryFilesTime(workspace) {
  const files = ["MEMORY.md", "memory.md", "USER.md"].map((name) => join(workspace, name));
  try {
    files.push(...readdirSync(join(workspace, "memory")).filter((n) => n.endsWith(".md"))
      .map((name) => join(workspace, "memory", name)));
  } catch {
    // no memory/ folder
  }
  let newest = 0;
  for (const file of files) {
    try {
      newest = Math.max(newest, statSync(file).mtimeMs);
    } catch {
      // absent
    }
  }
  return newest;
}

// maxmem import --from openclaw, when the workspace's memory files changed since the last
// one (the time is kept in maxmem's state folder, so a one-shot `openclaw agent` run
// does not import again); only what is new is added.
function importIfChanged(cfg, workspace) {
  if (!cfg.import || !cfg.state || !workspace) return;
  const newest = memoryFilesTime(workspace);
  const stamp = join(cfg.state, "openclaw-import.stamp");
  let last = 0;
  try {
    last = Number(readFileSync(stamp, "utf8")) || 0;
  } catch {
    // never imported from here
  }
  if (!newest || newest <= last) return;
  try {
    writeFileSync(stamp, String(newest), { mode: 0o600 });
  } catch {
    return;
  }
  detached(cfg, ["import", "--from", "openclaw", "--", workspace]); // a folder named "-x" is no option
}

export default definePluginEntry({
  id: "maxmem",
  name: "maxmem",
  description: "maxmem as OpenClaw's memory",
  register(api) {
    const cfg = settings(api.pluginConfig);
    const briefOf = briefs(cfg);
    api.registerTool(searchTool(cfg));
    api.registerTool(getTool(cfg));
    api.registerMemoryCapability({ promptBuilder: promptSection });

    api.on("before_prompt_build", async (event, ctx) => {
      if (ctx?.trigger && ctx.trigger !== "user") return undefined;
      const prompt = firstUserText(event);
      const stdin = JSON.stringify({ prompt, session_id: ctx?.sessionId ?? null, cwd: ctx?.workspaceDir ?? null });
      const [recalled, brief] = await Promise.all([
        cfg.recall && prompt.trim() ? recallFor(cfg, stdin) : "",
        cfg.brief ? briefOf(ctx) : "",
      ]);
      const result = {};
      if (recalled) result.prependContext = recalled;
      if (brief) result.prependSystemContext = brief;
      return Object.keys(result).length ? result : undefined;
    }, { timeoutMs: cfg.timeoutMs + 1000 });

    api.on("agent_end", (_event, ctx) => {
      if (cfg.capture) capture(cfg, ctx);
      importIfChanged(cfg, ctx?.workspaceDir);
    });
  },
});
