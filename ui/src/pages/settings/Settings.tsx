// The permissions a user can hold besides admin: the server's own list (no imports there).
import { ADMIN_LEVEL_PERMISSIONS, PERMISSIONS } from '@shared/permissions';
import { useEffect, useId, useState } from 'react';
import { type AuthToken, api, getToken, type User } from '../../api';
import { Dialog } from '../../components/Dialog';
import { Check, Field, Form, FormActions, Select } from '../../components/Field';
import { ErrorBanner, Feedback, Notice, Page, SmallButton } from '../../components/feedback';
import { type Column, ListTable } from '../../components/ListTable';
import { type Action, useAction } from '../../components/useAction';
import { useForm } from '../../components/useForm';
import { useListPage } from '../../components/useListPage';
import { formatIso } from '../../format';
import { useMe } from '../../useMe';
import { AuditSection } from './AuditSection';
import { McpSection } from './McpSection';
import { PipelinesSection } from './PipelinesSection';
import { Section } from './Section';
import { StreamsSection } from './StreamsSection';
import { TeamsSection } from './TeamsSection';

type UserRow = User & { created_at?: string };

const TOKEN_TYPES = ['INGEST', 'USER'] as const;

/** Settings: the caller's API tokens (list, create with the secret shown once, revoke); for admins, users. */
export function SettingsPage() {
  const me = useMe();
  const streams = me?.is_admin || me?.permissions.includes('manage_streams');
  // A token made for an assistant joins the API tokens list at once.
  const [tokensMade, setTokensMade] = useState(0);
  return (
    <Page title="Settings">
      <TokensSection tokensMade={tokensMade} />
      <McpSection onTokenCreated={() => setTokensMade((n) => n + 1)} />
      {me?.is_admin && <UsersSection />}
      {me?.is_admin && <TeamsSection />}
      {streams && <StreamsSection isAdmin={me?.is_admin ?? false} />}
      {(me?.is_admin || me?.permissions.includes('manage_pipelines')) && <PipelinesSection />}
      {me?.is_admin && <AuditSection />}
    </Page>
  );
}

function TokensSection({ tokensMade }: { tokensMade: number }) {
  const { list, act, remove: revoke } = useListPage<AuthToken>('/api/authtokens?page_size=1000');
  const { reload } = list;
  useEffect(() => {
    if (tokensMade > 0) reload();
  }, [tokensMade, reload]);
  const form = useForm({ name: '', type: 'INGEST' as AuthToken['token_type'] });
  const [created, setCreated] = useState<AuthToken | null>(null);
  const [copied, setCopied] = useState(false);
  const sessionKeyId = (getToken() ?? '').split('_')[0];

  const create = () => {
    setCopied(false);
    return act.run(async () => {
      const { name, type } = form.values;
      const body: { token_type: string; name?: string } = { token_type: type };
      if (name.trim()) body.name = name.trim();
      setCreated(await api<AuthToken>('/api/authtokens', { body }));
      form.set('name', '');
      list.reload();
    });
  };

  const remove = async (t: AuthToken) => {
    const name = t.name || t.key_id;
    const path = `/api/authtokens/${encodeURIComponent(t.key_id)}`;
    const question = `Revoke the token "${name}"? Clients using it stop working.`;
    if ((await revoke(question, path, `Revoked “${name}”.`)) && created?.key_id === t.key_id)
      setCreated(null);
  };

  const copy = async () => {
    if (!created) return;
    try {
      await navigator.clipboard.writeText(created.secret_key);
      setCopied(true);
    } catch {
      setCopied(false);
    }
  };

  const columns: Column<AuthToken>[] = [
    { header: 'Name', cell: (t) => t.name || <span className="muted">(no name)</span> },
    { header: 'Type', cell: (t) => t.token_type },
    { header: 'Key', cell: (t) => <code>{t.secret_key}</code> },
    { header: 'Created', wide: true, cell: (t) => formatIso(t.created_at) },
    { header: 'Expires', wide: true, cell: (t) => (t.expires_at ? formatIso(t.expires_at) : 'Never') },
    { header: 'Last used', wide: true, cell: (t) => (t.last_used_at ? formatIso(t.last_used_at) : 'Never') },
  ];

  return (
    <Section title="API tokens">
      <p className="muted">
        USER tokens act as you; INGEST tokens may only send events. Send one as{' '}
        <code>Authorization: token &lt;key&gt;</code>.
      </p>
      <Form className="inline-form" onSubmit={create}>
        <Field label="Token name" id="token-name" error={act.fieldError('name')}>
          <input maxLength={200} placeholder="e.g. web-1 shipper" {...form.text('name')} />
        </Field>
        <Field label="Token type" id="token-type">
          <Select options={TOKEN_TYPES} {...form.text('type')} />
        </Field>
        <FormActions submit="Create token" busy={act.busy} />
      </Form>
      <ErrorBanner error={act.error} />
      <Notice>{act.notice}</Notice>
      {created && (
        <div className="secret" role="status">
          <p>
            <strong>New token “{created.name || created.key_id}”.</strong> Copy it now: it is not shown again.
          </p>
          <div className="secret-row">
            <input
              aria-label="New token secret"
              readOnly
              value={created.secret_key}
              onFocus={(e) => e.currentTarget.select()}
            />
            <button type="button" className="secondary" onClick={copy}>
              {copied ? 'Copied' : 'Copy'}
            </button>
            <button type="button" className="secondary" onClick={() => setCreated(null)}>
              Done
            </button>
          </div>
        </div>
      )}
      <ErrorBanner error={list.error} />
      <ListTable
        list={list}
        columns={columns}
        rowKey={(t) => t.key_id}
        noun={['active token', 'active tokens']}
        actions={(t) =>
          t.key_id === sessionKeyId ? (
            <span className="muted">This session</span>
          ) : (
            <SmallButton aria-label={`Revoke ${t.name || t.key_id}`} onClick={() => remove(t)}>
              Revoke
            </SmallButton>
          )
        }
      />
    </Section>
  );
}

/** Admins: the users (GET /api/users), a new one (POST), edit (PATCH) and delete (DELETE). */
function UsersSection() {
  const { list, act, remove } = useListPage<UserRow>('/api/users?page_size=1000&ordering=username');
  const [editing, setEditing] = useState<UserRow | null>(null);

  const columns: Column<UserRow>[] = [
    { header: 'Username', cell: (u) => u.username },
    { header: 'Admin', cell: (u) => (u.is_admin ? 'Yes' : 'No') },
    {
      header: 'Signs in',
      cell: (u) =>
        [
          u.sso ? 'single sign-on' : 'local',
          ...(u.local_login ? ['password always allowed'] : []),
          ...(u.disabled ? ['disabled'] : []),
        ].join(', '),
    },
    {
      header: 'Permissions',
      cell: (u) =>
        u.permissions.length > 0 ? u.permissions.join(', ') : <span className="muted">none</span>,
    },
    { header: 'Created', wide: true, cell: (u) => formatIso(u.created_at) },
  ];

  return (
    <Section title="Users">
      <NewUser onCreated={list.reload} />
      <Feedback action={act} error={list.error} />
      <ListTable
        list={list}
        columns={columns}
        noun={['user', 'users']}
        actions={(u) => (
          <>
            <SmallButton aria-label={`Edit ${u.username}`} onClick={() => setEditing(u)}>
              Edit
            </SmallButton>
            <SmallButton
              aria-label={`Delete ${u.username}`}
              onClick={() =>
                remove(
                  `Delete the user “${u.username}” and their tokens?`,
                  `/api/users/${u.id}`,
                  `Deleted user “${u.username}”.`,
                )
              }
            >
              Delete
            </SmallButton>
          </>
        )}
      />
      {editing && (
        <EditUser
          user={editing}
          onClose={() => setEditing(null)}
          onSaved={(u) => {
            act.setNotice(`Saved user “${u.username}”.`);
            setEditing(null);
            list.reload();
          }}
        />
      )}
    </Section>
  );
}

const PASSWORD_HINT = 'Passwords have 8 or more characters; a user without one signs in with tokens only.';

/** A user's fields, for a new user and for editing one. */
function useUserForm(user?: User) {
  const form = useForm({
    username: user?.username ?? '',
    password: '',
    isAdmin: user?.is_admin ?? false,
    localLogin: user?.local_login ?? false,
    disabled: user?.disabled ?? false,
  });
  const [permissions, setPermissions] = useState<readonly string[]>(user?.permissions ?? []);
  const reset = () => {
    form.reset();
    setPermissions([]);
  };
  return { form, permissions, setPermissions, reset };
}

function UserFields(props: {
  fields: ReturnType<typeof useUserForm>;
  act: Action;
  /** Editing a user: the password is a new one, and the fields stand in a column. */
  edit?: boolean;
}) {
  const { form, permissions, setPermissions } = props.fields;
  const hintId = useId();
  const identity = (
    <>
      <Field
        label="Username"
        id={props.edit ? undefined : 'user-name'}
        error={props.act.fieldError('username')}
      >
        <input
          required
          maxLength={150}
          autoComplete="off"
          autoCapitalize="none"
          spellCheck={false}
          {...form.text('username')}
        />
      </Field>
      <Field
        label={props.edit ? 'New password' : 'Password'}
        id={props.edit ? undefined : 'user-password'}
        hint={props.edit ? `Empty: the password stays. ${PASSWORD_HINT}` : undefined}
        describedBy={props.edit ? undefined : hintId}
        error={props.act.fieldError('password')}
      >
        <input type="password" autoComplete="new-password" {...form.text('password')} />
      </Field>
      <Check label="Admin" {...form.check('isAdmin')} />
      <Check
        label="Break-glass account: signs in locally even when single sign-on is required"
        {...form.check('localLogin')}
      />
      {props.edit && (
        <Check
          label="Disabled: every token and session ends now, and sign-in is refused"
          {...form.check('disabled')}
        />
      )}
    </>
  );
  return (
    <>
      {props.edit ? (
        identity
      ) : (
        <>
          <div className="inline-form">{identity}</div>
          <p id={hintId} className="muted small-text form-hint">
            {PASSWORD_HINT}
          </p>
        </>
      )}
      <fieldset className="perm-list">
        <legend>Permissions</legend>
        {PERMISSIONS.map((p) => (
          <Check
            key={p}
            label={ADMIN_LEVEL_PERMISSIONS.includes(p) ? `${p} (admin-level)` : p}
            checked={permissions.includes(p)}
            onChange={(e) =>
              setPermissions(
                PERMISSIONS.filter((q) => (q === p ? e.target.checked : permissions.includes(q))),
              )
            }
          />
        ))}
      </fieldset>
      <p className="muted small-text form-hint">
        Admin-level permissions let their holder change who reads which events, themselves included: grant
        them only to people trusted with every event.
      </p>
    </>
  );
}

function NewUser({ onCreated }: { onCreated: () => void }) {
  const fields = useUserForm();
  const act = useAction();

  const create = () =>
    act.run(
      async () => {
        const { username, password, isAdmin, localLogin } = fields.form.values;
        const body: {
          username: string;
          password?: string;
          is_admin: boolean;
          local_login: boolean;
          permissions: string[];
        } = {
          username: username.trim(),
          is_admin: isAdmin,
          local_login: localLogin,
          permissions: [...fields.permissions],
        };
        if (password) body.password = password;
        const u = await api<User>('/api/users', { body });
        fields.reset();
        onCreated();
        return u;
      },
      { done: (u) => `Created user “${u.username}”.` },
    );

  return (
    <>
      <Form title="New user" level={3} className="user-form" onSubmit={create}>
        <UserFields fields={fields} act={act} />
        <FormActions submit="Create user" busy={act.busy} />
      </Form>
      <ErrorBanner error={act.error} />
      <Notice>{act.notice}</Notice>
    </>
  );
}

/** A dialog to change a user: only what changed is sent (PATCH /api/users/{id}). */
function EditUser(props: { user: UserRow; onClose: () => void; onSaved: (u: User) => void }) {
  const { user } = props;
  const fields = useUserForm(user);
  const act = useAction();

  const save = () =>
    act.run(async () => {
      const { username, password, isAdmin, localLogin, disabled } = fields.form.values;
      const permissions = [...fields.permissions];
      const body: Partial<{
        username: string;
        password: string;
        is_admin: boolean;
        local_login: boolean;
        disabled: boolean;
        permissions: string[];
      }> = {};
      if (localLogin !== (user.local_login ?? false)) body.local_login = localLogin;
      if (disabled !== (user.disabled ?? false)) body.disabled = disabled;
      if (username.trim() !== user.username) body.username = username.trim();
      if (password) body.password = password;
      if (isAdmin !== user.is_admin) body.is_admin = isAdmin;
      if (permissions.join() !== user.permissions.join()) body.permissions = permissions;
      props.onSaved(await api<User>(`/api/users/${user.id}`, { method: 'PATCH', body }));
    });

  return (
    <Dialog label={`Edit user ${user.username}`} onClose={props.onClose}>
      <Form title={`Edit user “${user.username}”`} className="" onSubmit={save}>
        <UserFields fields={fields} act={act} edit />
        <ErrorBanner error={act.error} />
        <FormActions submit="Save" busy={act.busy} onCancel={props.onClose} />
      </Form>
    </Dialog>
  );
}
