// An OpenAI-compatible chat-completions server over node-llama-cpp (llama.cpp's CPU build), the
// test peer of nexp's language-model client. Started by scripts/llm-local.
//
//   node server.mjs --model FILE.gguf [--host 127.0.0.1] [--port 0] [--parallel 4] [--threads 1]
//                   [--port-file FILE]
//
// Endpoints: GET /v1/models, GET /health, POST /v1/chat/completions (non-streaming).
// The model and its sampler are llama.cpp's, unmodified: the prompt is the model's ChatML template,
// tokenized with its tokenizer; each token is sampled by llama.cpp with the request's temperature,
// top_p and seed, under a GBNF grammar when one is given (`grammar`, as llama.cpp's own server takes
// it, or `response_format: {type: json_schema}`); `usage` counts real tokens.
//
// Like llama.cpp's own server, it refuses `n` > 1 ("Only one completion choice is allowed"): clients
// draw several samples as several seeded calls. It refuses images (the model reads text only) and
// `stream: true`. `logprobs` are the log-probabilities of llama.cpp's sampling distribution (after
// temperature and top_p), the closest thing node-llama-cpp exposes to raw log-softmax values.
// Each answer carries a `Server-Timing: total;dur=MS` header: the server's own time for the request,
// so that a client can tell its own overhead from the server's latency.
import {createServer} from "node:http";
import {writeFileSync, renameSync} from "node:fs";
import {basename} from "node:path";
import {getLlama, LlamaGrammarEvaluationState} from "node-llama-cpp";

function parseArgs(argv) {
  const opts = {host: "127.0.0.1", port: 0, parallel: 4, threads: 1, contextSize: 2048, portFile: ""};
  for (let i = 0; i < argv.length; i += 2) {
    const [key, value] = [argv[i], argv[i + 1]];
    if (key === "--model") opts.model = value;
    else if (key === "--host") opts.host = value;
    else if (key === "--port") opts.port = Number(value);
    else if (key === "--parallel") opts.parallel = Number(value);
    else if (key === "--threads") opts.threads = Number(value);
    else if (key === "--ctx") opts.contextSize = Number(value);
    else if (key === "--port-file") opts.portFile = value;
    else throw new Error(`unknown option ${key}`);
  }
  if (!opts.model) throw new Error("--model FILE.gguf is required");
  return opts;
}

// ---------------------------------------------------------------- errors in OpenAI's shape

class HttpError extends Error {
  constructor(status, message, param = null, type = "invalid_request_error") {
    super(message);
    Object.assign(this, {status, param, type});
  }
}

function send(res, status, body, started) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "Content-Type": "application/json",
    "Content-Length": Buffer.byteLength(text),
    "Server-Timing": `total;dur=${(Number(process.hrtime.bigint() - started) / 1e6).toFixed(3)}`,
  });
  res.end(text);
}

// ---------------------------------------------------------------- the request

const ROLES = new Set(["system", "user", "assistant", "tool", "developer"]);

function messageText(message, i) {
  if (!message || typeof message !== "object" || !ROLES.has(message.role))
    throw new HttpError(400, `messages[${i}].role must be one of ${[...ROLES].join(", ")}`, `messages[${i}].role`);
  if (typeof message.content === "string") return message.content;
  if (!Array.isArray(message.content))
    throw new HttpError(400, `messages[${i}].content must be a string or a list of parts`, `messages[${i}].content`);
  return message.content.map((part, j) => {
    if (part?.type === "text" && typeof part.text === "string") return part.text;
    if (part?.type === "image_url")
      throw new HttpError(400, "image input is not supported by this model (it reads text only)",
                          `messages[${i}].content[${j}]`);
    throw new HttpError(400, `messages[${i}].content[${j}] has an unknown type`, `messages[${i}].content[${j}]`);
  }).join("");
}

function number(body, key, lo, hi, fallback) {
  const v = body[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== "number" || !Number.isFinite(v) || v < lo || v > hi)
    throw new HttpError(400, `'${key}' must be a number in [${lo}, ${hi}], got ${JSON.stringify(v)}`, key);
  return v;
}

// The request, checked, in the terms the sampler takes.
function parseRequest(body) {
  if (!body || typeof body !== "object") throw new HttpError(400, "the body must be a JSON object");
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    throw new HttpError(400, "'messages' must be a non-empty list", "messages");
  if (body.stream) throw new HttpError(400, "streaming is not supported by this server; send stream: false", "stream");
  const n = number(body, "n", 1, 128, 1);
  if (n !== 1) throw new HttpError(400, "Only one completion choice is allowed", "n");
  const stop = body.stop === undefined || body.stop === null ? [] : [].concat(body.stop);
  if (stop.some((s) => typeof s !== "string" || s === ""))
    throw new HttpError(400, "'stop' must be a string or a list of non-empty strings", "stop");
  const seed = number(body, "seed", -(2 ** 53), 2 ** 53, undefined);
  return {
    messages: body.messages.map((m, i) => ({role: m.role, text: messageText(m, i)})),
    temperature: number(body, "temperature", 0, 2, 1),
    topP: number(body, "top_p", 0, 1, 1),
    maxTokens: number(body, "max_completion_tokens", 1, 1 << 20, number(body, "max_tokens", 1, 1 << 20, 256)),
    stop,
    // llama.cpp takes a 32-bit seed; a larger one is folded, so that every integer is accepted.
    seed: seed === undefined ? undefined : Number(BigInt.asUintN(32, BigInt(Math.trunc(seed)))),
    logprobs: body.logprobs === true,
    topLogprobs: number(body, "top_logprobs", 0, 20, 0),
    grammar: typeof body.grammar === "string" ? body.grammar : undefined,
    responseFormat: body.response_format,
  };
}

// ---------------------------------------------------------------- generation

class Server {
  constructor(llama, model, context, parallel) {
    Object.assign(this, {llama, model, context, name: basename(model.filename ?? "model.gguf")});
    this.free = Array.from({length: parallel}, () => context.getSequence());
    this.waiting = [];
    this.grammars = new Map();
    this.served = 0;
  }

  async acquire() {
    if (this.free.length > 0) return this.free.pop();
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  release(sequence) {
    const next = this.waiting.shift();
    if (next) next(sequence);
    else this.free.push(sequence);
  }

  async grammarFor(req) {
    let key, make;
    const format = req.responseFormat;
    if (req.grammar !== undefined) {
      key = "gbnf:" + req.grammar;
      make = () => this.llama.createGrammar({grammar: req.grammar});
    } else if (format?.type === "json_schema") {
      const schema = format.json_schema?.schema;
      if (!schema || typeof schema !== "object")
        throw new HttpError(400, "response_format.json_schema.schema must be a JSON schema object", "response_format");
      key = "schema:" + JSON.stringify(schema);
      make = () => this.llama.createGrammarForJsonSchema(schema);
    } else if (format?.type === "json_object") {
      key = "json";
      make = () => this.llama.getGrammarFor("json");
    } else if (format !== undefined && format?.type !== "text") {
      throw new HttpError(400, "response_format.type must be text, json_object or json_schema", "response_format");
    } else {
      return undefined;
    }
    if (!this.grammars.has(key)) {
      try {
        this.grammars.set(key, await make());
      } catch (e) {
        throw new HttpError(400, `the grammar does not parse: ${e.message}`, "grammar");
      }
    }
    return this.grammars.get(key);
  }

  prompt(messages) {
    const text = messages.map((m) => `<|im_start|>${m.role}\n${m.text}<|im_end|>\n`).join("") +
                 "<|im_start|>assistant\n";
    const tokens = this.model.tokenize(text, true);
    const bos = this.model.tokens.bos;
    return bos !== null && this.model.tokens.shouldPrependBosToken ? [bos, ...tokens] : tokens;
  }

  async complete(req) {
    const grammar = await this.grammarFor(req);
    const prompt = this.prompt(req.messages);
    if (prompt.length + req.maxTokens > this.context.contextSize)
      throw new HttpError(400, `the prompt (${prompt.length} tokens) and max_tokens (${req.maxTokens}) exceed the ` +
                               `context of ${this.context.contextSize} tokens`, "max_tokens");
    const sequence = await this.acquire();
    try {
      await sequence.clearHistory();
      return await this.sample(sequence, prompt, req, grammar);
    } finally {
      this.release(sequence);
    }
  }

  async sample(sequence, prompt, req, grammar) {
    const state = grammar ? new LlamaGrammarEvaluationState({model: this.model, grammar}) : undefined;
    const options = {temperature: req.temperature, topP: req.topP, topK: 0, minP: 0, seed: req.seed ?? Date.now(),
                     grammarEvaluationState: state, yieldEogToken: true};
    const metadata = {confidence: req.logprobs, probabilities: req.logprobs && req.topLogprobs > 0};
    const tokens = [], logprobs = [];
    let text = "", finish = "length";
    for await (const out of sequence.evaluateWithMetadata(prompt, metadata, options)) {
      if (this.model.isEogToken(out.token)) { finish = "stop"; break; }
      tokens.push(out.token);
      if (req.logprobs) logprobs.push(this.logprob(out, req.topLogprobs));
      text = this.model.detokenize(tokens);
      const at = Math.min(...req.stop.map((s) => text.indexOf(s)).filter((i) => i >= 0));
      if (Number.isFinite(at)) { text = text.slice(0, at); finish = "stop"; break; }
      if (tokens.length >= req.maxTokens) break;
    }
    return {text, finish, promptTokens: prompt.length, completionTokens: tokens.length, logprobs};
  }

  logprob(out, top) {
    const piece = (t) => this.model.detokenize([t], true);
    const entry = (t, p) => ({token: piece(t), logprob: Math.log(p), bytes: [...Buffer.from(piece(t))]});
    const e = entry(out.token, out.confidence);
    e.top_logprobs = top > 0 ? [...out.probabilities.entries()].slice(0, top).map(([t, p]) => entry(t, p)) : [];
    return e;
  }

  async chat(body) {
    const req = parseRequest(body);
    const r = await this.complete(req);
    this.served += 1;
    return {
      id: `chatcmpl-${process.pid}-${this.served}`,
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: this.name,
      system_fingerprint: "node-llama-cpp-3.21.1",
      choices: [{index: 0, message: {role: "assistant", content: r.text},
                 logprobs: req.logprobs ? {content: r.logprobs} : null, finish_reason: r.finish}],
      usage: {prompt_tokens: r.promptTokens, completion_tokens: r.completionTokens,
              total_tokens: r.promptTokens + r.completionTokens},
    };
  }

  models() {
    return {object: "list", data: [{id: this.name, object: "model", created: 0, owned_by: "nexp",
                                    meta: {n_ctx: this.context.contextSize}}]};
  }
}

// ---------------------------------------------------------------- HTTP

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

async function handle(server, req, res) {
  const started = process.hrtime.bigint();
  try {
    const path = req.url.split("?")[0];
    if (req.method === "GET" && path === "/health") return send(res, 200, {status: "ok"}, started);
    if (req.method === "GET" && path === "/v1/models") return send(res, 200, server.models(), started);
    if (path === "/v1/chat/completions") {
      if (req.method !== "POST") throw new HttpError(405, "use POST");
      let body;
      try {
        body = JSON.parse(await readBody(req));
      } catch (e) {
        throw new HttpError(400, `the body is not JSON: ${e.message}`);
      }
      return send(res, 200, await server.chat(body), started);
    }
    throw new HttpError(404, `no route ${req.method} ${path}; this server has /v1/models and /v1/chat/completions`);
  } catch (e) {
    const status = e instanceof HttpError ? e.status : 500;
    const error = {message: e.message, type: e instanceof HttpError ? e.type : "server_error",
                   param: e.param ?? null, code: null};
    if (status === 500) console.error(e);
    send(res, status, {error}, started);
  }
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const llama = await getLlama({gpu: false, build: "never", logLevel: "warn", maxThreads: opts.threads});
  const model = await llama.loadModel({modelPath: opts.model});
  // One context holds `parallel` sequences; llama.cpp decodes concurrent requests in shared batches.
  const context = await model.createContext({contextSize: opts.contextSize,
                                             sequences: opts.parallel, threads: opts.threads});
  const server = new Server(llama, model, context, opts.parallel);
  const http = createServer({noDelay: true, keepAliveTimeout: 30000}, (req, res) => handle(server, req, res));
  http.listen(opts.port, opts.host, () => {
    const port = http.address().port;
    if (opts.portFile) {
      writeFileSync(opts.portFile + ".tmp", `${port}\n`);
      renameSync(opts.portFile + ".tmp", opts.portFile);
    }
    console.log(`serving ${server.name} on http://${opts.host}:${port}/v1 (${opts.parallel} parallel)`);
  });
  const stop = () => { http.close(() => process.exit(0)); http.closeAllConnections(); };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

main().catch((e) => {
  console.error(`llm-local server: ${e.message}`);
  process.exit(1);
});
