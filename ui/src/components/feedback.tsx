import type { ButtonHTMLAttributes, ReactNode } from 'react';
import type { Action } from './useAction';
import { cls } from './util';

/** An error as an alert; nothing when there is none. */
export function ErrorBanner({ error, className }: { error: string | null | undefined; className?: string }) {
  if (!error) return null;
  return (
    <p role="alert" className={cls('error', className)}>
      {error}
    </p>
  );
}

/** A status line (announced politely when it changes): what was just done. */
export function Notice({ children, className }: { children: ReactNode; className?: string }) {
  return (
    <p role="status" className={cls('muted', className)}>
      {children}
    </p>
  );
}

/** A page: its title as the one h1, then the content. */
export function Page({
  title,
  className,
  children,
}: {
  title: string;
  className?: string;
  children: ReactNode;
}) {
  return (
    <div className={cls('page', className)}>
      <h1>{title}</h1>
      {children}
    </div>
  );
}

/** What an action did (a status line) and what went wrong (an alert: its error, else `error`). */
export function Feedback(props: { action: Action; error?: string | null; noticeClassName?: string }) {
  return (
    <>
      <Notice className={props.noticeClassName}>{props.action.notice}</Notice>
      <ErrorBanner error={props.action.error ?? props.error} />
    </>
  );
}

/** A small secondary button, as in a table row or a toolbar. */
export function SmallButton(props: ButtonHTMLAttributes<HTMLButtonElement>) {
  return <button type="button" className="secondary small" {...props} />;
}

/** The live connection is down: says so, with a button to try again at once. */
export function ConnectionLost({ what, onRetry }: { what: string; onRetry: () => void }) {
  return (
    <div className="notice live-lost">
      <span>The connection to the server was lost. Reconnecting… {what}</span>
      <button type="button" className="secondary small" onClick={onRetry}>
        Retry now
      </button>
    </div>
  );
}
