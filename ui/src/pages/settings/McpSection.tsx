import { useEffect, useId, useRef, useState } from 'react';
import { type Answer, type AuthToken, api } from '../../api';
import { ErrorBanner } from '../../components/feedback';
import { useAction } from '../../components/useAction';
import { formatIso } from '../../format';
import { useApi } from '../../useApi';
import { type ConfigBlock, mcpConfigBlocks, mcpEndpoint, mcpTokenName, TRIED_WITH } from './mcp-config';
import { Section } from './Section';
import './mcp.css';

type Methods = Answer<'/api/auth/methods'>;

/**
 * Settings → AI assistants (MCP), for every user: the MCP endpoint's address, a USER token
 * made for an assistant (shown once), and each client's configuration filled with both.
 * `onTokenCreated`: the API tokens list shows the new one.
 */
export function McpSection({ onTokenCreated }: { onTokenCreated: () => void }) {
  const methods = useApi<Methods>('/api/auth/methods');
  const act = useAction();
  const [created, setCreated] = useState<AuthToken | null>(null);
  // Until the server says whether it has a publicUrl, no address is shown (not a wrong one).
  const known = methods.data !== null || methods.error !== null;
  const url = mcpEndpoint(methods.data?.public_url, window.location.origin);
  const blocks = mcpConfigBlocks(url, created?.secret_key ?? null);

  const create = () =>
    act.run(async () => {
      const body = { token_type: 'USER', name: mcpTokenName(new Date()) };
      setCreated(await api<AuthToken>('/api/authtokens', { body }));
      onTokenCreated();
    });

  return (
    <Section title="AI assistants (MCP)">
      <p className="muted mcp-intro">
        An assistant you run (Claude, an IDE, a local model) can search these logs through the Model Context
        Protocol, with a token of yours: it reads what you read, and each of its calls is in the audit trail.
        Logscope never calls a model itself.
      </p>
      <div className="mcp-endpoint">
        <label htmlFor="mcp-endpoint-url">Endpoint URL</label>
        <div className="secret-row">
          <input
            id="mcp-endpoint-url"
            readOnly
            value={known ? url : ''}
            placeholder="…"
            onFocus={(e) => e.currentTarget.select()}
          />
          <CopyButton text={known ? url : ''} what="the endpoint URL" />
        </div>
      </div>
      <div className="mcp-token">
        <button type="button" onClick={create} disabled={act.busy}>
          Create token for an assistant
        </button>
        <span className="muted">
          A USER token named <code>{mcpTokenName(new Date())}</code>; revoke it under API tokens.
        </span>
      </div>
      <ErrorBanner error={act.error} />
      {created && <NewToken token={created} onDone={() => setCreated(null)} />}
      <h3 className="mcp-clients-title">Configuration for your client</h3>
      <p className="muted">
        <WithCode
          text={
            created
              ? 'Each block holds the new token: keep them as private as the token.'
              : 'Each block has `<token>` where the token goes: create one above to have it filled in.'
          }
        />
      </p>
      <div className="mcp-blocks">
        {blocks.map((b) => (
          <ClientBlock key={b.id} block={b} />
        ))}
      </div>
      <p className="muted small-text">
        <WithCode text={TRIED_WITH} />
      </p>
    </Section>
  );
}

/** The token just made, shown once, with what it may do. */
function NewToken({ token, onDone }: { token: AuthToken; onDone: () => void }) {
  return (
    <div className="secret" role="status">
      <p>
        <strong>New token “{token.name}”.</strong> Copy it now: it is not shown again. It reads what you read,
        no more: the streams you may read, as you.
        {token.expires_at ? ` It expires at ${formatIso(token.expires_at)}, with your sign-in.` : ''}
      </p>
      <div className="secret-row">
        <input
          aria-label="Assistant token"
          readOnly
          value={token.secret_key}
          onFocus={(e) => e.currentTarget.select()}
        />
        <CopyButton text={token.secret_key} what="the token" />
        <button type="button" className="secondary" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}

/** One client's configuration: what it is, where it goes, the text and its Copy button. */
function ClientBlock({ block }: { block: ConfigBlock }) {
  const titleId = useId();
  return (
    <section className="mcp-block" aria-labelledby={titleId}>
      <div className="mcp-block-head">
        <h4 id={titleId}>{block.title}</h4>
        <CopyButton text={block.text} what={`the ${block.title} configuration`} />
      </div>
      <p className="mcp-where">
        <WithCode text={block.where} />
        {block.file && (
          <>
            {' '}
            <code>{block.file}</code>
          </>
        )}
      </p>
      <pre className="mcp-code">{block.format === 'json' ? block.text : <Words text={block.text} />}</pre>
      {block.notes.map((n) => (
        <p key={n} className="muted small-text mcp-note">
          <WithCode text={n} />
        </p>
      ))}
    </section>
  );
}

/**
 * A command or settings that wrap at spaces only (a browser also breaks after a hyphen,
 * which split `--header` in two); the text stays the same.
 */
function Words({ text }: { text: string }) {
  return (
    <>
      {text.split(/( |\n)/).map((part, i) =>
        part === ' ' || part === '\n' || part === '' ? (
          part
        ) : (
          // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one fixed text, never reordered
          <span key={i} className="mcp-word">
            {part}
          </span>
        ),
      )}
    </>
  );
}

/** Text whose `backquoted` parts are code. */
function WithCode({ text }: { text: string }) {
  return (
    <>
      {text.split('`').map((part, i) =>
        // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one fixed text, never reordered
        i % 2 === 1 ? <code key={i}>{part}</code> : part,
      )}
    </>
  );
}

/**
 * Copy, with what happened said beside it (the button's own text stays "Copy": its name
 * must hold what it shows). Without a clipboard (an insecure origin, a refused permission)
 * it says to select the text.
 */
function CopyButton({ text, what }: { text: string; what: string }) {
  const [said, setSaid] = useState('');
  const timer = useRef<number | undefined>(undefined);
  useEffect(() => () => window.clearTimeout(timer.current), []);
  const copy = async () => {
    window.clearTimeout(timer.current);
    try {
      await navigator.clipboard.writeText(text);
      setSaid('Copied');
      timer.current = window.setTimeout(() => setSaid(''), 4000);
    } catch {
      setSaid('Not copied: select the text and copy it');
    }
  };
  return (
    <span className="mcp-copy">
      <button
        type="button"
        className="secondary small"
        aria-label={`Copy ${what}`}
        onClick={copy}
        disabled={!text}
      >
        Copy
      </button>
      <span role="status" className="muted small-text">
        {said}
      </span>
    </span>
  );
}
