import { Check } from '../../components/Field';

/** A list of checkboxes choosing ids among named options, in a fieldset named by `legend`. */
export function Pick(props: {
  legend: string;
  options: ReadonlyArray<{ id: number; name: string }>;
  chosen: readonly number[];
  onChange: (ids: number[]) => void;
  empty?: string;
}) {
  const { options, chosen } = props;
  return (
    <fieldset className="perm-list">
      <legend>{props.legend}</legend>
      {options.length === 0 && <span className="muted">{props.empty ?? 'None to choose.'}</span>}
      {options.map((o) => (
        <Check
          key={o.id}
          label={o.name}
          checked={chosen.includes(o.id)}
          onChange={(e) =>
            props.onChange(
              options
                .filter((x) => (x.id === o.id ? e.target.checked : chosen.includes(x.id)))
                .map((x) => x.id),
            )
          }
        />
      ))}
    </fieldset>
  );
}
