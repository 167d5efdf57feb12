// gguf_oracle.mjs - independent oracle for bench_gguf.sh, using @huggingface/gguf 0.4.6
// (installed by the script into a scratch dir, never committed).
//   node gguf_oracle.mjs <hf-node_modules-dir> [-n ITERS] FILE...   -> one JSON line per file
//   node gguf_oracle.mjs --make-synth OUT.gguf                      -> write a synthetic model
import { pathToFileURL } from "node:url";
import { writeFileSync } from "node:fs";
import path from "node:path";

function makeSynth(out) {
  const parts = [];
  const u32 = (v) => { const b = Buffer.alloc(4); b.writeUInt32LE(v); parts.push(b); };
  const u64 = (v) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); parts.push(b); };
  const str = (s) => { const b = Buffer.from(s, "utf8"); u64(b.length); parts.push(b); };
  const kvU32 = (k, v) => { str(k); u32(4); u32(v); };
  const kvStr = (k, v) => { str(k); u32(8); str(v); };
  const nLayers = 32, perLayer = ["attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate",
    "ffn_up", "ffn_down", "attn_norm", "ffn_norm"];
  const tensors = [["token_embd.weight", [256, 64], 12]];
  for (let l = 0; l < nLayers; l++)
    for (const t of perLayer)
      tensors.push([`blk.${l}.${t}.weight`, t.endsWith("norm") ? [256] : [256, 16],
        t.endsWith("norm") ? 0 : (t === "ffn_down" ? 14 : 12)]);
  tensors.push(["output_norm.weight", [256], 0], ["output.weight", [256, 64], 14]);
  const nTok = 128256, nMerges = 280147;
  const kvs = 17;
  parts.push(Buffer.from("GGUF")); u32(3); u64(tensors.length); u64(kvs);
  kvStr("general.architecture", "llama");
  kvStr("general.type", "model");
  kvStr("general.name", "Synthetic Llama");
  kvU32("general.file_type", 15);
  kvU32("general.quantization_version", 2);
  kvU32("llama.context_length", 131072);
  kvU32("llama.embedding_length", 4096);
  kvU32("llama.block_count", nLayers);
  kvU32("llama.feed_forward_length", 14336);
  kvU32("llama.attention.head_count", 32);
  kvU32("llama.attention.head_count_kv", 8);
  kvStr("tokenizer.ggml.model", "gpt2");
  kvStr("tokenizer.ggml.pre", "llama-bpe");
  str("tokenizer.ggml.tokens"); u32(9); u32(8); u64(nTok);
  for (let i = 0; i < nTok; i++) str(`tok_${i.toString(36)}`);
  str("tokenizer.ggml.token_type"); u32(9); u32(5); u64(nTok);
  parts.push(Buffer.alloc(4 * nTok));
  str("tokenizer.ggml.merges"); u32(9); u32(8); u64(nMerges);
  for (let i = 0; i < nMerges; i++) str(`m${i % 977} x${i.toString(36)}`);
  kvStr("tokenizer.chat_template", "{% for m in messages %}{{ m.content }}{% endfor %}".repeat(160));
  const blk = { 0: [1, 4], 12: [256, 144], 14: [256, 210] };
  let off = 0n;
  const sizes = [];
  for (const [name, ne, type] of tensors) {
    str(name); u32(ne.length); for (const d of ne) u64(d); u32(type); u64(off);
    const [b, s] = blk[type];
    const nb = BigInt((ne[0] / b) * s * (ne[1] ?? 1));
    sizes.push(nb);
    off += (nb + 31n) / 32n * 32n;
  }
  let len = parts.reduce((a, b) => a + b.length, 0);
  parts.push(Buffer.alloc((32 - (len % 32)) % 32));
  const lastPad = (32n - sizes[sizes.length - 1] % 32n) % 32n;
  parts.push(Buffer.alloc(Number(off - lastPad)));
  writeFileSync(out, Buffer.concat(parts));
}

async function main() {
  const args = process.argv.slice(2);
  if (args[0] === "--make-synth") { makeSynth(args[1]); return; }
  const nm = args.shift();
  let iters = 3;
  if (args[0] === "-n") { args.shift(); iters = Number(args.shift()); }
  const mod = await import(pathToFileURL(path.join(nm, "@huggingface/gguf/dist/index.mjs")).href);
  for (const file of args) {
    const res = { file };
    try {
      const times = [];
      let r;
      for (let i = 0; i < iters; i++) {
        const t0 = process.hrtime.bigint();
        r = await mod.gguf(file, { allowLocalFile: true, computeParametersCount: true });
        times.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
      times.sort((a, b) => a - b);
      const md = r.metadata;
      const toks = md["tokenizer.ggml.tokens"];
      const arch = md["general.architecture"];
      Object.assign(res, {
        ms_min: times[0], ms_median: times[Math.floor(times.length / 2)], iters,
        version: Number(md.version), kv_count: Number(md.kv_count),
        tensor_count: Number(md.tensor_count), arch: arch ?? null,
        vocab: Array.isArray(toks) ? toks.length : Number(md[`${arch}.vocab_size`] ?? 0),
        file_type: md["general.file_type"] ?? null, params: Number(r.parameterCount ?? 0),
        data_offset: Number(r.tensorDataOffset), little_endian: r.littleEndian,
      });
    } catch (e) {
      res.error = String(e && e.message || e);
    }
    console.log(JSON.stringify(res));
  }
}
main();
