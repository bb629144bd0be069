/**
 * Settings → AI assistants (MCP): the endpoint's address and each client's configuration,
 * filled with it and a token, in the forms docs/mcp.md gives. Pure: the page and its unit
 * test build the same text.
 */

/**
 * The client versions the blocks were tried with (docs/mcp.md says how; a unit test holds
 * the two to the same versions).
 */
export const TRIED_WITH =
  'Tried with `mcp-remote` 0.15.1 (the Claude Desktop block), the MCP Inspector’s command line 2.12.0 and the official MCP TypeScript SDK client 1.32.2; the Claude Code, VS Code and Cursor blocks follow each client’s documented format.';

/** What stands for the token in a block until one is created on the page. */
export const TOKEN_PLACEHOLDER = '<token>';

/** The name of a token made for an assistant: `mcp-<YYYY-MM-DD>`, the local date. */
export function mcpTokenName(now: Date): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return `mcp-${now.getFullYear()}-${two(now.getMonth() + 1)}-${two(now.getDate())}`;
}

/**
 * The MCP endpoint: `publicUrl` + `/mcp`; where the server has no `publicUrl`, the origin
 * the browser reached the web UI at (the server's own fallback names its listen address,
 * which is `localhost` to a server on `0.0.0.0`).
 */
export function mcpEndpoint(publicUrl: string | null | undefined, origin: string): string {
  return `${(publicUrl || origin).replace(/\/+$/, '')}/mcp`;
}

/**
 * mcp-remote refuses a plain-http URL unless its host is `localhost` or `127.0.0.1` or it
 * is given `--allow-http`.
 */
export function needsAllowHttp(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  return parsed.protocol === 'http:' && parsed.hostname !== 'localhost' && parsed.hostname !== '127.0.0.1';
}

/** A word for a POSIX shell: as it is when it is plain, else in single quotes. */
export function shellWord(word: string): string {
  return /^[\w.:/@%+=,~-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

export type BlockId =
  | 'claude-code'
  | 'vscode'
  | 'cursor'
  | 'claude-desktop'
  | 'inspector'
  | 'inspector-cli'
  | 'local-model';

/** One client's configuration as the page shows it, with a Copy button. */
export interface ConfigBlock {
  id: BlockId;
  /** The client. */
  title: string;
  /** Where the text goes, said before it; `backquoted` parts are code. */
  where: string;
  /** The file it goes in, shown in code after `where`; absent for a command. */
  file?: string;
  /** `json` blocks are JSON documents (the unit test parses them). */
  format: 'shell' | 'json' | 'text';
  text: string;
  /** What to know besides (shown after the block); `backquoted` parts are code. */
  notes: string[];
}

const json = (value: unknown) => JSON.stringify(value, null, 2);

/**
 * Every client's block for the endpoint `url` (ending in `/mcp`) and `token` (null: the
 * placeholder `<token>`).
 */
export function mcpConfigBlocks(url: string, token: string | null): ConfigBlock[] {
  const secret = token ?? TOKEN_PLACEHOLDER;
  const header = `Authorization: Bearer ${secret}`;
  const bridgeArgs = ['-y', 'mcp-remote', url, '--header', `Authorization:\${LOGSCOPE_AUTH}`];
  const allowHttp = needsAllowHttp(url);
  const streamable = `Transport: Streamable HTTP\nURL: ${url}\nHeader: ${header}`;
  return [
    {
      id: 'claude-code',
      title: 'Claude Code',
      where: 'Run in a terminal:',
      format: 'shell',
      text: `claude mcp add --transport http logscope ${shellWord(url)} --header "${header}"`,
      notes: [],
    },
    {
      id: 'vscode',
      title: 'VS Code',
      where: 'In the workspace, as',
      file: '.vscode/mcp.json',
      format: 'json',
      text: json({
        servers: {
          logscope: {
            type: 'http',
            url,
            headers: { Authorization: `Bearer \${input:logscope-token}` },
          },
        },
        inputs: [
          { type: 'promptString', id: 'logscope-token', description: 'Logscope token', password: true },
        ],
      }),
      notes: [
        'VS Code asks for the token when it first starts the server and keeps it in its secret storage.',
      ],
    },
    {
      id: 'cursor',
      title: 'Cursor',
      where: 'In',
      file: '~/.cursor/mcp.json',
      format: 'json',
      text: json({ mcpServers: { logscope: { url, headers: { Authorization: `Bearer ${secret}` } } } }),
      notes: [],
    },
    {
      id: 'claude-desktop',
      title: 'Claude Desktop',
      where: 'In Settings → Developer → Edit Config,',
      file: 'claude_desktop_config.json',
      format: 'json',
      text: json({
        mcpServers: {
          logscope: {
            command: 'npx',
            args: allowHttp ? [...bridgeArgs, '--allow-http'] : bridgeArgs,
            env: { LOGSCOPE_AUTH: `Bearer ${secret}` },
          },
        },
      }),
      notes: [
        'Its configuration file starts local commands only: `mcp-remote` (Node.js 18 or later) carries the calls to the URL.',
        ...(allowHttp
          ? [
              '`--allow-http`: the URL is plain http, which `mcp-remote` refuses for any host but localhost without it.',
            ]
          : []),
      ],
    },
    {
      id: 'inspector',
      title: 'MCP Inspector',
      where: 'Run `npx @modelcontextprotocol/inspector`, then connect with:',
      format: 'text',
      text: streamable,
      notes: [
        'Its browser-direct connection needs `http://localhost:6274` in the server’s `mcpAllowedOrigins`; through its proxy (the default) it does not.',
      ],
    },
    {
      id: 'inspector-cli',
      title: 'MCP Inspector, command line',
      where: 'Run in a terminal (lists the tools):',
      format: 'shell',
      text: `npx @modelcontextprotocol/inspector --cli ${shellWord(url)} --transport http --header "${header}" --method tools/list`,
      notes: [],
    },
    {
      id: 'local-model',
      title: 'A local model',
      where: 'Any MCP client that speaks Streamable HTTP, such as the one your local model runs tools with:',
      format: 'text',
      text: streamable,
      notes: [],
    },
  ];
}
