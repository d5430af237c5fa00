// A scripted ACP agent built on the official TypeScript SDK. The gateway's
// interop tests spawn it as `node dist/agent.js` and drive it over stdio
// (newline-delimited JSON-RPC 2.0). The reply depends only on the prompt text:
//
//   hello       three or more agent_message_chunk updates that join to
//               "Hello from the TypeScript agent."
//   tool        text, a tool_call (pending) and two tool_call_updates
//               (in_progress, then completed with text "hi"), more text
//   permission  session/request_permission, then "Allowed." or "Rejected.";
//               stop reason "cancelled" when the outcome is cancelled
//   slow        one chunk every 100 ms for 30 s, until session/cancel
//
// Anything else gets a one-line echo. Stdout carries protocol traffic only;
// logs go to stderr.

import { Readable, Writable } from "node:stream";
import type { ReadableStream, WritableStream } from "node:stream/web";
import * as acp from "@agentclientprotocol/sdk";

const HELLO_CHUNKS = ["Hello ", "from the ", "TypeScript ", "agent."];
const SLOW_INTERVAL_MS = 100;
const SLOW_DURATION_MS = 30_000;

function log(message: string): void {
  process.stderr.write(`tsagent: ${message}\n`);
}

/** State of one session/new: the abort controller of the running prompt. */
type Session = { running: AbortController | null };

const sessions = new Map<string, Session>();
let nextSession = 1;

/** Resolves after ms milliseconds, or early (with false) when signal aborts. */
function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve(false);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** Turns the prompt's content blocks into one trimmed, lower-case string. */
function promptText(blocks: acp.ContentBlock[]): string {
  return blocks
    .map((b) => (b.type === "text" ? b.text : ""))
    .join("")
    .trim()
    .toLowerCase();
}

type Turn = {
  sessionId: string;
  client: acp.AgentContext;
  signal: AbortSignal;
};

function say(turn: Turn, text: string): Promise<void> {
  return turn.client.notify(acp.methods.client.session.update, {
    sessionId: turn.sessionId,
    update: {
      sessionUpdate: "agent_message_chunk",
      content: { type: "text", text },
    },
  });
}

function update(turn: Turn, u: acp.SessionUpdate): Promise<void> {
  return turn.client.notify(acp.methods.client.session.update, {
    sessionId: turn.sessionId,
    update: u,
  });
}

async function hello(turn: Turn): Promise<acp.StopReason> {
  for (const chunk of HELLO_CHUNKS) {
    if (turn.signal.aborted) return "cancelled";
    await say(turn, chunk);
  }
  return "end_turn";
}

async function tool(turn: Turn): Promise<acp.StopReason> {
  const toolCallId = "call_echo_1";
  await say(turn, "Running a command.");
  await update(turn, {
    sessionUpdate: "tool_call",
    toolCallId,
    title: "Run echo hi",
    kind: "execute",
    status: "pending",
    rawInput: { command: "echo hi" },
  });
  await update(turn, {
    sessionUpdate: "tool_call_update",
    toolCallId,
    status: "in_progress",
  });
  await update(turn, {
    sessionUpdate: "tool_call_update",
    toolCallId,
    status: "completed",
    content: [{ type: "content", content: { type: "text", text: "hi" } }],
    rawOutput: { stdout: "hi\n", exitCode: 0 },
  });
  await say(turn, "The command printed hi.");
  return turn.signal.aborted ? "cancelled" : "end_turn";
}

async function permission(turn: Turn): Promise<acp.StopReason> {
  const res = await turn.client.request(
    acp.methods.client.session.requestPermission,
    {
      sessionId: turn.sessionId,
      toolCall: {
        toolCallId: "call_write_1",
        title: "Write notes.txt",
        kind: "edit",
        status: "pending",
      },
      options: [
        { optionId: "allow_once", name: "Allow", kind: "allow_once" },
        { optionId: "reject_once", name: "Reject", kind: "reject_once" },
      ],
    },
  );
  if (res.outcome.outcome === "cancelled" || turn.signal.aborted) {
    return "cancelled";
  }
  const allowed = res.outcome.optionId === "allow_once";
  await say(turn, allowed ? "Allowed." : "Rejected.");
  return "end_turn";
}

async function slow(turn: Turn): Promise<acp.StopReason> {
  const ticks = SLOW_DURATION_MS / SLOW_INTERVAL_MS;
  for (let i = 1; i <= ticks; i++) {
    if (turn.signal.aborted) return "cancelled";
    await say(turn, `tick ${i}\n`);
    if (!(await pause(SLOW_INTERVAL_MS, turn.signal))) return "cancelled";
  }
  return "end_turn";
}

async function echo(turn: Turn, text: string): Promise<acp.StopReason> {
  await say(turn, `You said: ${text}`);
  return "end_turn";
}

const app = acp
  .agent({ name: "acpgw-tsagent" })
  .onRequest(acp.methods.agent.initialize, ({ params }) => {
    log(`initialize: client protocol version ${params.protocolVersion}`);
    return {
      protocolVersion: acp.PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: false,
        promptCapabilities: { image: false, audio: false, embeddedContext: false },
      },
      agentInfo: { name: "acpgw-tsagent", title: "TypeScript test agent", version: "0.0.0" },
      authMethods: [],
    };
  })
  .onRequest(acp.methods.agent.session.new, ({ params }) => {
    if (!Array.isArray(params.mcpServers)) {
      throw acp.RequestError.invalidParams(undefined, "mcpServers must be an array");
    }
    const sessionId = `ts-session-${nextSession++}`;
    sessions.set(sessionId, { running: null });
    log(`session/new: ${sessionId} cwd=${params.cwd} mcpServers=${params.mcpServers.length}`);
    return { sessionId };
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client, signal }) => {
    const session = sessions.get(params.sessionId);
    if (!session) {
      throw acp.RequestError.sessionNotFound(params.sessionId);
    }
    if (session.running) {
      throw acp.RequestError.invalidRequest(undefined, "a prompt is already running");
    }
    const controller = new AbortController();
    const onRequestAbort = () => controller.abort();
    signal.addEventListener("abort", onRequestAbort, { once: true });
    session.running = controller;
    const turn: Turn = { sessionId: params.sessionId, client, signal: controller.signal };
    const text = promptText(params.prompt);
    log(`session/prompt: ${params.sessionId} ${JSON.stringify(text)}`);
    try {
      let stopReason: acp.StopReason;
      switch (text) {
        case "hello":
          stopReason = await hello(turn);
          break;
        case "tool":
          stopReason = await tool(turn);
          break;
        case "permission":
          stopReason = await permission(turn);
          break;
        case "slow":
          stopReason = await slow(turn);
          break;
        default:
          stopReason = await echo(turn, text);
      }
      log(`session/prompt: ${params.sessionId} stop ${stopReason}`);
      return { stopReason };
    } finally {
      signal.removeEventListener("abort", onRequestAbort);
      session.running = null;
    }
  })
  .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
    log(`session/cancel: ${params.sessionId}`);
    sessions.get(params.sessionId)?.running?.abort();
  });

const stream = acp.ndJsonStream(
  Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
  Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
);
const connection = app.connect(stream);
await connection.closed;
for (const session of sessions.values()) {
  session.running?.abort();
}
log("connection closed");
