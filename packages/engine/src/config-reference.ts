import { z } from 'zod';

/**
 * A bot's config file reference, written from its zod schema: every key with its type, default
 * and the schema's own `.describe()` text. The schema is the one place a setting is defined;
 * the reference (`CONFIG.md` beside each bot) is generated from it and a test keeps the
 * committed copy equal to what this renders, so the two cannot drift.
 */
export interface ConfigReferenceOptions {
  /** The page's heading. */
  title: string;
  /** Paragraphs under the heading (markdown). */
  intro: string;
  schema: z.ZodType;
  /** How to write the page again, said at its top. */
  regenerate: string;
}

/** The subset of JSON Schema that zod emits for a config schema. */
interface JsonSchema {
  type?: string | string[];
  description?: string;
  default?: unknown;
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minItems?: number;
  pattern?: string;
}

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

export function renderConfigReference(options: ConfigReferenceOptions): string {
  const root = z.toJSONSchema(options.schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  const lines = [
    `# ${options.title}`,
    '',
    `<!-- Generated from the config schema: do not edit by hand. ${options.regenerate} -->`,
    '',
    options.intro.trim(),
    '',
  ];
  const topLevel: [string, JsonSchema, boolean][] = [];
  const sections: [string, JsonSchema, boolean][] = [];
  for (const [key, schema] of Object.entries(root.properties ?? {})) {
    const required = (root.required ?? []).includes(key) && schema.default === undefined;
    (isSection(schema) ? sections : topLevel).push([key, schema, required]);
  }
  if (topLevel.length > 0) lines.push('## Top level', '', ...table(topLevel.map(([k, s, r]) => row(k, s, r))), '');
  for (const [key, schema, required] of sections) {
    lines.push(`## \`${key}\`${required ? ' (required)' : ''}`, '');
    if (schema.description !== undefined) lines.push(schema.description, '');
    lines.push(...table(rowsOf(key, schema)), '');
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

/** An object of settings (not a secret reference, which is a union of small objects). */
function isSection(schema: JsonSchema): boolean {
  return schema.type === 'object' && schema.properties !== undefined;
}

function rowsOf(prefix: string, schema: JsonSchema): string[] {
  const rows: string[] = [];
  for (const [key, child] of Object.entries(schema.properties ?? {})) {
    const path = `${prefix}.${key}`;
    const required = (schema.required ?? []).includes(key) && child.default === undefined;
    rows.push(row(path, child, required));
    if (isSection(child)) rows.push(...rowsOf(path, child));
  }
  return rows;
}

function row(path: string, schema: JsonSchema, required: boolean): string {
  const fallback = required ? '**required**' : schema.default === undefined ? '(none)' : code(schema.default);
  return `| \`${path}\` | ${cell(typeOf(schema))} | ${cell(fallback)} | ${cell(schema.description ?? '')} |`;
}

function table(rows: string[]): string[] {
  return ['| Key | Type | Default | Meaning |', '| --- | --- | --- | --- |', ...rows];
}

function typeOf(schema: JsonSchema): string {
  if (schema.anyOf !== undefined) {
    if (isSecretRef(schema.anyOf)) return 'secret: `{"env": "NAME"}`, `{"file": "path"}` or the value itself';
    return schema.anyOf.map(typeOf).join(', or ');
  }
  if (schema.enum !== undefined) return `one of ${schema.enum.map((value) => code(value)).join(', ')}`;
  if (schema.const !== undefined) return code(schema.const);
  switch (schema.type) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'true or false';
    case 'integer':
    case 'number':
      return numberType(schema);
    case 'array': {
      const item = schema.items === undefined ? 'any' : typeOf(schema.items);
      const items = item === 'string' ? 'strings' : item;
      return `list of ${items}${schema.minItems !== undefined && schema.minItems > 0 ? ` (at least ${schema.minItems})` : ''}`;
    }
    case 'object':
      return 'object';
    default:
      return 'any';
  }
}

function numberType(schema: JsonSchema): string {
  const whole = schema.type === 'integer' ? 'whole number' : 'number';
  const low =
    schema.exclusiveMinimum !== undefined
      ? schema.exclusiveMinimum + 1
      : schema.minimum !== undefined
        ? schema.minimum
        : undefined;
  const high = schema.maximum !== undefined && schema.maximum < MAX_SAFE ? schema.maximum : undefined;
  if (low !== undefined && high !== undefined) return `${whole}, ${low} to ${high}`;
  if (low !== undefined) return `${whole}, ${low} or more`;
  if (high !== undefined) return `${whole}, at most ${high}`;
  return whole;
}

function isSecretRef(branches: JsonSchema[]): boolean {
  const keys = branches.map((b) => Object.keys(b.properties ?? {}).join(','));
  return keys.includes('env') && keys.includes('file');
}

function code(value: unknown): string {
  return `\`${JSON.stringify(value)}\``;
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n+/g, ' ');
}
