import { CONFIG_VARIABLES, type ConfigVariable } from './variables.js';

/**
 * The configuration reference as a Markdown table, one row per variable of
 * CONFIG_VARIABLES: name, default, accepted form and unit, meaning. The project
 * docs/configuration.md embeds its output, so the documentation cannot drift from the loader.
 */
export function renderConfigTable(): string {
  const rows = CONFIG_VARIABLES.map((variable: ConfigVariable) => {
    const notes: string[] = [];
    if (variable.aliases !== undefined && variable.aliases.length > 0) {
      notes.push(
        `Also read as ${variable.aliases.map((a) => `\`${a}\``).join(', ')} (this name wins).`,
      );
    }
    if (variable.secret) notes.push('Secret: never shown in errors or logs.');
    const meaning = [variable.description, ...notes].join(' ');
    return `| \`${variable.name}\` | ${cell(defaultCell(variable))} | ${cell(variable.type)} | ${cell(meaning)} |`;
  });
  return [
    '| Variable | Default | Type (unit) | Meaning |',
    '| --- | --- | --- | --- |',
    ...rows,
    '',
  ].join('\n');
}

function defaultCell(variable: ConfigVariable): string {
  if (variable.defaultText !== undefined) return variable.defaultText;
  if (variable.default === undefined || variable.default === '') return 'unset';
  return `\`${variable.default}\``;
}

/** Escapes what would break a table cell. */
function cell(text: string): string {
  return text.replaceAll('|', '\\|').replaceAll('\n', ' ');
}
