// Starts the fake OpenAI-compatible server (internal/fakeopenai, built by
// run.sh as $FAKE_OPENAI_BIN) for a test: an upstream LLM with scripted
// replies whose received requests the test can read.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

export const fakeBin = process.env.FAKE_OPENAI_BIN;
if (!fakeBin) throw new Error('FAKE_OPENAI_BIN is not set: run the tests with integrations/run.sh');

// startFakeOpenAI resolves to { url, requests(), chats(), reply(...texts),
// fail(n, status, message), stop() }. url is the API base (".../v1");
// chats() lists the chat completion requests received, oldest first, each
// { authorization, body }. With no reply queued a chat answers
// "You said: <last message>".
export async function startFakeOpenAI() {
  const child = spawn(fakeBin, [], { stdio: ['pipe', 'pipe', 'inherit'] });
  const line = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('fakeopenai did not start within 30s')), 30_000);
    createInterface({ input: child.stdout }).once('line', (l) => {
      clearTimeout(timer);
      resolve(l);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`fakeopenai exited with ${code}`));
    });
  });
  const { url, control } = JSON.parse(line);
  const post = async (path, body) => {
    const r = await fetch(control + path, { method: 'POST', body: JSON.stringify(body) });
    if (!r.ok) throw new Error(`fakeopenai ${path}: ${r.status} ${await r.text()}`);
  };
  const requests = async () => (await fetch(control + '/requests')).json();
  return {
    url,
    requests,
    chats: async () => (await requests()).filter((r) => r.path.endsWith('/chat/completions')),
    reply: (...replies) => post('/replies', { replies }),
    fail: (n, status, message) => post('/fail', { n, status, message }),
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.stdin.end();
        await exited;
      }
    },
  };
}
