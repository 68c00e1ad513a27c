import { assertNever } from '@bubble/protocol';

/**
 * The value of a JSON text cut off mid-stream (a tool's input while `tool-input-delta` chunks
 * arrive): parsed as it is when it is complete, else repaired by closing what is open and
 * dropping a dangling key, comma or partial token, the way the `ai` package's
 * `parsePartialJson` repairs it, so a streaming tool part shows the same input as in `ai`.
 * Undefined when even the repair does not parse.
 */
export function parsePartialJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    try {
      return JSON.parse(repairJson(text));
    } catch {
      return undefined;
    }
  }
}

type Scan =
  | 'root'
  | 'finish'
  | 'object-start'
  | 'object-after-comma'
  | 'object-key'
  | 'object-after-key'
  | 'object-before-value'
  | 'object-after-value'
  | 'array-start'
  | 'array-after-comma'
  | 'array-after-value'
  | 'string'
  | 'string-escape'
  | 'string-unicode'
  | 'number'
  | 'literal';

const LITERALS = ['true', 'false', 'null'];

/** Keeps the longest prefix that ends a valid token, then closes every open string, object and array. */
export function repairJson(input: string): string {
  const stack: Scan[] = ['root'];
  let lastValid = -1;
  let literalStart = 0;
  let unicodeDigits = 0;
  const top = (): Scan => stack[stack.length - 1]!;
  const replaceTop = (next: Scan): void => {
    stack[stack.length - 1] = next;
  };

  const valueStart = (char: string, i: number, after: Scan): void => {
    const open = (inner: Scan, valid: boolean): void => {
      if (valid) lastValid = i;
      replaceTop(after);
      stack.push(inner);
    };
    if (char === '"') open('string', true);
    else if (char === 't' || char === 'f' || char === 'n') {
      literalStart = i;
      open('literal', true);
    } else if (char === '-') open('number', false);
    else if (char >= '0' && char <= '9') open('number', true);
    else if (char === '{') open('object-start', true);
    else if (char === '[') open('array-start', true);
  };
  const afterObjectValue = (char: string, i: number): void => {
    if (char === ',') replaceTop('object-after-comma');
    else if (char === '}') {
      lastValid = i;
      stack.pop();
    }
  };
  const afterArrayValue = (char: string, i: number): void => {
    if (char === ',') replaceTop('array-after-comma');
    else if (char === ']') {
      lastValid = i;
      stack.pop();
    }
  };
  /** A number or literal ended at `char`: the container it was in reads `char` next. */
  const endScalar = (char: string, i: number): void => {
    stack.pop();
    if (top() === 'object-after-value') afterObjectValue(char, i);
    else if (top() === 'array-after-value') afterArrayValue(char, i);
  };

  for (let i = 0; i < input.length; i++) {
    const char = input[i]!;
    const state = top();
    switch (state) {
      case 'root':
        valueStart(char, i, 'finish');
        break;
      case 'finish':
        break;
      case 'object-start':
        if (char === '"') replaceTop('object-key');
        else if (char === '}') {
          lastValid = i;
          stack.pop();
        }
        break;
      case 'object-after-comma':
        if (char === '"') replaceTop('object-key');
        break;
      case 'object-key':
        if (char === '"') replaceTop('object-after-key');
        break;
      case 'object-after-key':
        if (char === ':') replaceTop('object-before-value');
        break;
      case 'object-before-value':
        valueStart(char, i, 'object-after-value');
        break;
      case 'object-after-value':
        afterObjectValue(char, i);
        break;
      case 'string':
        if (char === '"') {
          stack.pop();
          lastValid = i;
        } else if (char === '\\') stack.push('string-escape');
        else lastValid = i;
        break;
      case 'string-escape':
        stack.pop();
        if (char === 'u') {
          unicodeDigits = 0;
          stack.push('string-unicode');
        } else lastValid = i;
        break;
      case 'string-unicode':
        if (/[0-9a-fA-F]/.test(char) && ++unicodeDigits === 4) {
          stack.pop();
          lastValid = i;
        }
        break;
      case 'array-start':
        if (char === ']') {
          lastValid = i;
          stack.pop();
        } else {
          lastValid = i;
          valueStart(char, i, 'array-after-value');
        }
        break;
      case 'array-after-value':
        if (char === ',') replaceTop('array-after-comma');
        else if (char === ']') {
          lastValid = i;
          stack.pop();
        } else lastValid = i;
        break;
      case 'array-after-comma':
        valueStart(char, i, 'array-after-value');
        break;
      case 'number':
        if (char >= '0' && char <= '9') lastValid = i;
        else if (char === ',' || char === '}' || char === ']') endScalar(char, i);
        else if (char !== 'e' && char !== 'E' && char !== '-' && char !== '.') stack.pop();
        break;
      case 'literal': {
        const partial = input.slice(literalStart, i + 1);
        if (LITERALS.some((literal) => literal.startsWith(partial))) lastValid = i;
        else endScalar(char, i);
        break;
      }
      default:
        return assertNever(state, 'JSON scan state');
    }
  }

  let result = input.slice(0, lastValid + 1);
  for (let i = stack.length - 1; i >= 0; i--) {
    const open = stack[i]!;
    if (open === 'string') result += '"';
    else if (open.startsWith('object-')) result += '}';
    else if (open.startsWith('array-')) result += ']';
    else if (open === 'literal') {
      const partial = input.slice(literalStart);
      const literal = LITERALS.find((candidate) => candidate.startsWith(partial));
      if (literal !== undefined) result += literal.slice(partial.length);
    }
  }
  return result;
}
