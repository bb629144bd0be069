import { useState } from 'react';
import { api, type Schemas, type User } from '../../api';
import { Dialog } from '../../components/Dialog';
import { Check, Field, Form, FormActions } from '../../components/Field';
import { ErrorBanner, Feedback, SmallButton } from '../../components/feedback';
import { type Column, ListTable } from '../../components/ListTable';
import { useAction } from '../../components/useAction';
import { useListPage } from '../../components/useListPage';
import { useApi } from '../../useApi';
import { Pick } from './Pick';
import { Section } from './Section';

export type Team = Schemas['Team'];

/** Admins: teams (GET /api/teams), new (POST), edit (PATCH) and delete; `everyone` is built in. */
export function TeamsSection() {
  const { list, act, remove } = useListPage<Team>('/api/teams?page_size=1000');
  const users = useApi<{ results: User[] }>('/api/users?page_size=1000&ordering=username');
  const [editing, setEditing] = useState<Team | 'new' | null>(null);
  const names = new Map((users.data?.results ?? []).map((u) => [u.id, u.username]));

  const columns: Column<Team>[] = [
    { header: 'Team', cell: (t) => (t.provider_synced ? `${t.name} (synced from sign-on)` : t.name) },
    {
      header: 'Members',
      cell: (t) =>
        t.builtin ? (
          <span className="muted">every user</span>
        ) : t.members.length ? (
          t.members.map((id) => names.get(id) ?? `#${id}`).join(', ')
        ) : (
          <span className="muted">none</span>
        ),
    },
  ];

  return (
    <Section title="Teams">
      <p className="muted">
        Teams name who reads a stream. Everyone is in <code>everyone</code>.
      </p>
      <button type="button" onClick={() => setEditing('new')}>
        New team
      </button>
      <Feedback action={act} error={list.error} />
      <ListTable
        list={list}
        columns={columns}
        noun={['team', 'teams']}
        actions={(t) =>
          t.builtin ? (
            <span className="muted">Built in</span>
          ) : (
            <>
              <SmallButton aria-label={`Edit team ${t.name}`} onClick={() => setEditing(t)}>
                Edit
              </SmallButton>
              <SmallButton
                aria-label={`Delete team ${t.name}`}
                onClick={() =>
                  remove(
                    `Delete the team “${t.name}”? Streams it reads lose it as a reader.`,
                    `/api/teams/${t.id}`,
                    `Deleted team “${t.name}”.`,
                  )
                }
              >
                Delete
              </SmallButton>
            </>
          )
        }
      />
      {editing && (
        <TeamDialog
          team={editing === 'new' ? null : editing}
          users={users.data?.results ?? []}
          onClose={() => setEditing(null)}
          onSaved={(t) => {
            act.setNotice(`Saved team “${t.name}”.`);
            setEditing(null);
            list.reload();
          }}
        />
      )}
    </Section>
  );
}

function TeamDialog(props: {
  team: Team | null;
  users: readonly User[];
  onClose: () => void;
  onSaved: (t: Team) => void;
}) {
  const { team } = props;
  const [name, setName] = useState(team?.name ?? '');
  const [members, setMembers] = useState<number[]>(team?.members ?? []);
  const [synced, setSynced] = useState(team?.provider_synced ?? false);
  const act = useAction();
  const title = team ? `Edit team “${team.name}”` : 'New team';
  const save = () =>
    act.run(async () => {
      const body = { name: name.trim(), members, provider_synced: synced };
      props.onSaved(
        await api<Team>(team ? `/api/teams/${team.id}` : '/api/teams', {
          method: team ? 'PATCH' : 'POST',
          body,
        }),
      );
    });
  return (
    <Dialog label={title} onClose={props.onClose}>
      <Form title={title} className="" onSubmit={save}>
        <Field label="Name" error={act.fieldError('name')}>
          <input required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />
        </Field>
        <Pick
          legend="Members"
          options={props.users.map((u) => ({ id: u.id, name: u.username }))}
          chosen={members}
          onChange={setMembers}
        />
        <Check
          label="Synced from single sign-on (the provider's group decides its members at each sign-in)"
          checked={synced}
          onChange={(e) => setSynced(e.target.checked)}
        />
        <ErrorBanner error={act.error} />
        <FormActions submit="Save" busy={act.busy} onCancel={props.onClose} />
      </Form>
    </Dialog>
  );
}
