import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  type BlockId,
  type ConfigBlock,
  mcpConfigBlocks,
  mcpEndpoint,
  mcpTokenName,
  needsAllowHttp,
  shellWord,
  TRIED_WITH,
} from '../../../ui/src/pages/settings/mcp-config.js';

// Settings → AI assistants (MCP) (ui/src/pages/settings/mcp-config.ts): the endpoint's
// address and each client’s block, the JSON ones parsed and compared whole with the forms
// the clients document, filled with the URL and the token (or `<token>`).

const URL_HTTPS = 'https://logs.example.com/mcp';
const TOKEN = 'lsAbCdEfGhIj_0123456789abcdefghijklmnopqrstuv';

const byId = (blocks: ConfigBlock[], id: BlockId): ConfigBlock => {
  const block = blocks.find((b) => b.id === id);
  if (!block) throw new Error(`no block ${id}`);
  return block;
};

describe('the MCP endpoint and the token name', () => {
  it('is publicUrl + /mcp, else the browser’s origin + /mcp', () => {
    expect(mcpEndpoint('https://logs.example.com', 'http://10.0.0.5:8080')).toBe(URL_HTTPS);
    expect(mcpEndpoint('https://logs.example.com/logscope/', 'http://x')).toBe(
      'https://logs.example.com/logscope/mcp',
    );
    expect(mcpEndpoint(null, 'http://10.0.0.5:8080')).toBe('http://10.0.0.5:8080/mcp');
    expect(mcpEndpoint('', 'http://127.0.0.1:4000')).toBe('http://127.0.0.1:4000/mcp');
  });

  it('names a token mcp-<YYYY-MM-DD> by the local date', () => {
    expect(mcpTokenName(new Date(2026, 0, 5, 23, 59))).toBe('mcp-2026-01-05');
    expect(mcpTokenName(new Date(2026, 10, 28, 0, 1))).toBe('mcp-2026-11-28');
  });

  it('asks mcp-remote for --allow-http for plain http but on localhost and 127.0.0.1', () => {
    expect(needsAllowHttp('http://logs.internal:8080/mcp')).toBe(true);
    expect(needsAllowHttp('http://10.0.0.5/mcp')).toBe(true);
    expect(needsAllowHttp('http://[::1]:8080/mcp')).toBe(true);
    expect(needsAllowHttp('http://localhost:8080/mcp')).toBe(false);
    expect(needsAllowHttp('http://127.0.0.1:8080/mcp')).toBe(false);
    expect(needsAllowHttp(URL_HTTPS)).toBe(false);
    expect(needsAllowHttp('not a url')).toBe(false);
  });

  it('quotes a URL for the shell only when it needs it', () => {
    expect(shellWord(URL_HTTPS)).toBe(URL_HTTPS);
    expect(shellWord('https://h/a&b/mcp')).toBe("'https://h/a&b/mcp'");
    expect(shellWord("https://h/it's/mcp")).toBe("'https://h/it'\\''s/mcp'");
  });
});

describe('the configuration blocks', () => {
  for (const [label, token, secret] of [
    ['with a new token', TOKEN, TOKEN],
    ['before a token is made', null, '<token>'],
  ] as const) {
    describe(label, () => {
      const blocks = mcpConfigBlocks(URL_HTTPS, token);

      it('are one for each client, each with text, JSON ones valid JSON', () => {
        expect(blocks.map((b) => b.id)).toEqual([
          'claude-code',
          'vscode',
          'cursor',
          'claude-desktop',
          'inspector',
          'inspector-cli',
          'local-model',
        ]);
        for (const b of blocks) {
          // The page shows `backquoted` parts of the words around a block as code: in pairs.
          for (const words of [b.where, ...b.notes]) expect(words.split('`').length % 2, words).toBe(1);
          expect(b.text.length).toBeGreaterThan(0);
          expect(b.text).toContain(URL_HTTPS);
          if (b.format === 'json') expect(() => JSON.parse(b.text)).not.toThrow();
        }
      });

      it('Claude Code: claude mcp add with the URL and the Bearer header', () => {
        expect(byId(blocks, 'claude-code').text).toBe(
          `claude mcp add --transport http logscope ${URL_HTTPS} --header "Authorization: Bearer ${secret}"`,
        );
      });

      it('VS Code: .vscode/mcp.json, the token asked for by an input', () => {
        const b = byId(blocks, 'vscode');
        expect(b.file).toBe('.vscode/mcp.json');
        expect(JSON.parse(b.text)).toEqual({
          servers: {
            logscope: {
              type: 'http',
              url: URL_HTTPS,
              headers: { Authorization: `Bearer \${input:logscope-token}` },
            },
          },
          inputs: [
            { type: 'promptString', id: 'logscope-token', description: 'Logscope token', password: true },
          ],
        });
        // The file may be committed with the project: the secret is never in it.
        expect(b.text).not.toContain(TOKEN);
      });

      it('Cursor: ~/.cursor/mcp.json with the URL and the header', () => {
        const b = byId(blocks, 'cursor');
        expect(b.file).toBe('~/.cursor/mcp.json');
        expect(JSON.parse(b.text)).toEqual({
          mcpServers: { logscope: { url: URL_HTTPS, headers: { Authorization: `Bearer ${secret}` } } },
        });
      });

      it('Claude Desktop: mcp-remote with the header from the environment, no --allow-http for https', () => {
        expect(JSON.parse(byId(blocks, 'claude-desktop').text)).toEqual({
          mcpServers: {
            logscope: {
              command: 'npx',
              args: ['-y', 'mcp-remote', URL_HTTPS, '--header', `Authorization:\${LOGSCOPE_AUTH}`],
              env: { LOGSCOPE_AUTH: `Bearer ${secret}` },
            },
          },
        });
      });

      it('the MCP Inspector: its page’s settings, and the --cli form', () => {
        expect(byId(blocks, 'inspector').text).toBe(
          `Transport: Streamable HTTP\nURL: ${URL_HTTPS}\nHeader: Authorization: Bearer ${secret}`,
        );
        expect(byId(blocks, 'inspector').notes.join(' ')).toContain('http://localhost:6274');
        expect(byId(blocks, 'inspector-cli').text).toBe(
          `npx @modelcontextprotocol/inspector --cli ${URL_HTTPS} --transport http --header "Authorization: Bearer ${secret}" --method tools/list`,
        );
      });

      it('a local model: Streamable HTTP, the URL and the header', () => {
        expect(byId(blocks, 'local-model').text).toBe(
          `Transport: Streamable HTTP\nURL: ${URL_HTTPS}\nHeader: Authorization: Bearer ${secret}`,
        );
      });
    });
  }

  it('Claude Desktop: --allow-http last for plain http but on localhost, and says why', () => {
    const remote = 'http://logs.internal:8080/mcp';
    const desktop = (url: string) => byId(mcpConfigBlocks(url, TOKEN), 'claude-desktop');
    expect(JSON.parse(desktop(remote).text).mcpServers.logscope.args).toEqual([
      '-y',
      'mcp-remote',
      remote,
      '--header',
      `Authorization:\${LOGSCOPE_AUTH}`,
      '--allow-http',
    ]);
    expect(desktop(remote).notes.join(' ')).toContain('--allow-http');
    for (const local of ['http://localhost:8080/mcp', 'http://127.0.0.1:8080/mcp']) {
      expect(JSON.parse(desktop(local).text).mcpServers.logscope.args).not.toContain('--allow-http');
      expect(desktop(local).notes.join(' ')).not.toContain('--allow-http');
    }
  });

  it('quotes a URL with shell characters in the commands, and keeps it exact in JSON', () => {
    const odd = 'https://h.example/a&b/mcp';
    const blocks = mcpConfigBlocks(odd, TOKEN);
    expect(byId(blocks, 'claude-code').text).toContain(` '${odd}' `);
    expect(byId(blocks, 'inspector-cli').text).toContain(` '${odd}' `);
    expect(JSON.parse(byId(blocks, 'cursor').text).mcpServers.logscope.url).toBe(odd);
  });
});

describe('the page and docs/mcp.md', () => {
  const doc = readFileSync('docs/mcp.md', 'utf8');
  const configuring = doc.slice(doc.indexOf('## Configuring a client'));
  /** The fenced blocks of "Configuring a client", in order; a shell line continued with `\` joined. */
  const fenced = [...configuring.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({
    lang: m[1],
    text: (m[2] as string).replace(/ \\\n\s*/g, ' ').trim(),
  }));
  // The docs' stand-ins for the public URL and the token.
  const blocks = mcpConfigBlocks('https://logs.example.com/mcp', 'lsk_…');

  it('give the same blocks', () => {
    expect(fenced.map((f) => f.lang)).toEqual(['sh', 'json', 'json', 'json', 'sh']);
    const [claudeCode, vscode, cursor, desktop, inspectorCli] = fenced.map((f) => f.text);
    expect(byId(blocks, 'claude-code').text).toBe(claudeCode);
    expect(JSON.parse(byId(blocks, 'vscode').text)).toEqual(JSON.parse(vscode as string));
    expect(JSON.parse(byId(blocks, 'cursor').text)).toEqual(JSON.parse(cursor as string));
    expect(JSON.parse(byId(blocks, 'claude-desktop').text)).toEqual(JSON.parse(desktop as string));
    expect(byId(blocks, 'inspector-cli').text).toBe(inspectorCli);
  });

  it('name the same client versions as tried', () => {
    const versions = TRIED_WITH.match(/\d+\.\d+\.\d+/g) ?? [];
    expect(versions).toHaveLength(3);
    const tried = doc.slice(doc.indexOf('**What was tried.**'));
    for (const v of versions) expect(tried, v).toContain(v);
  });
});
