import type { NextFunction, Request, Response } from 'express';
import type { OutgoingHttpHeaders } from 'node:http';
import { createRequire } from 'node:module';
import { Ajv, type ValidateFunction } from 'ajv';
import type { Logger } from 'pino';
import { answersPage, errorStatuses, problemSchema } from '../openapi.js';
import { problem } from './problem.js';
import { requestIdOf } from './request-context.js';
import type { Route } from './route.js';

// As in domain/validation.ts: ajv-formats is CommonJS, require() gives the function itself.
const addFormats = createRequire(import.meta.url)('ajv-formats') as typeof import('ajv-formats').default;

/**
 * Answers are checked as they are: no coercion, no defaults filled in (that would change what
 * the client gets), and the annotations only our request validator or OpenAPI reads ignored.
 */
const answerAjv = new Ajv({ allErrors: true, strict: false, coerceTypes: false, useDefaults: false });
addFormats(answerAjv, ['date', 'date-time', 'email', 'uri', 'ipv4', 'ipv6']);
const validProblem = answerAjv.compile(problemSchema);

interface DeclaredAnswer {
  /** The media types the declaration names (none: it declares no content, e.g. a 204 or a redirect). */
  types: string[];
  /** The body's schema by media type, for a JSON answer. */
  validate?: ValidateFunction | Record<string, ValidateFunction>;
}

const isJson = (type: string) => type === 'application/json' || type.endsWith('+json');
const mediaType = (header: unknown) => (typeof header === 'string' ? header.split(';')[0]!.trim().toLowerCase() : undefined);

/** What the OpenAPI document says a route answers: its success and each error status (api/openapi.ts). */
function declaredAnswers(route: Route): Map<number, DeclaredAnswer> {
  const answers = new Map<number, DeclaredAnswer>();
  const { status, schema, contentType = 'application/json', alternatives = {} } = route.success;
  const bodies = Object.entries({ [contentType]: schema, ...alternatives }).filter(([type, s]) => s && isJson(type));
  const success: DeclaredAnswer = schema
    ? { types: [contentType, ...Object.keys(alternatives)], validate: Object.fromEntries(bodies.map(([type, s]) => [type, answerAjv.compile(s!)])) }
    : { types: [] };
  answers.set(status, success);
  for (const [other, { body }] of Object.entries(route.alsoAnswers ?? {})) answers.set(Number(other), body === 'success' ? success : { types: [] });
  for (const s of errorStatuses(route)) {
    answers.set(s, { types: ['application/problem+json', ...(answersPage(route, s) ? ['text/html'] : [])], validate: validProblem });
  }
  return answers;
}

function contentTypeOf(res: Response, headers: unknown): string | undefined {
  const given = headers && typeof headers === 'object' && !Array.isArray(headers)
    ? Object.entries(headers as OutgoingHttpHeaders).find(([k]) => k.toLowerCase() === 'content-type')?.[1]
    : undefined;
  return mediaType(given ?? res.getHeader('content-type'));
}

/** What is wrong with an answer's status and media type, or undefined. */
function headMismatch(answers: Map<number, DeclaredAnswer>, status: number, type: string | undefined): string | undefined {
  const declared = answers.get(status);
  if (!declared) return `status ${status} is not declared (declared: ${[...answers.keys()].join(', ')})`;
  if (declared.types.length && type && !declared.types.includes(type)) return `status ${status} answered as ${type}, declared ${declared.types.join(' or ')}`;
  return undefined;
}

/** What is wrong with a JSON answer's body, or undefined. */
function bodyMismatch(answers: Map<number, DeclaredAnswer>, status: number, type: string | undefined, body: string | Buffer): string | undefined {
  const declared = answers.get(status)?.validate;
  if (!declared || !type || !isJson(type)) return undefined;
  const validate = typeof declared === 'function' ? declared : declared[type];
  if (!validate) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(body.toString());
  } catch {
    return `status ${status} answered with a body that is not JSON`;
  }
  if (validate(value)) return undefined;
  return `status ${status} answered off its schema: ${answerAjv.errorsText(validate.errors, { dataVar: 'body' })}`;
}

/**
 * For tests (createApp's checkAnswers): every answer of a route is held to its declaration, the
 * one the OpenAPI document is built from. A status it does not declare, a media type other than
 * the declared one, or a JSON body off the declared schema is logged and becomes a 500 naming
 * the mismatch, so the API test that provoked it fails, and the declaration (or the code)
 * is fixed. Installed first in the route's chain, so authentication's and the error handler's
 * answers are held to it too. A streamed answer (writeHead without res.send) has its status
 * and type checked, its body not.
 */
export function answerCheck(route: Route, logger: Logger) {
  const answers = declaredAnswers(route);
  return function checkAnswer(_req: Request, res: Response, next: NextFunction): void {
    const send = res.send.bind(res);
    const writeHead = res.writeHead.bind(res) as (status: number, ...rest: unknown[]) => Response;
    let refused = false;
    const refuse = (why: string) => {
      refused = true;
      logger.error({ route: `${route.method.toUpperCase()} ${route.path}`, mismatch: why }, 'answer off its declaration');
      return problem('internal_error', `Answer off its declaration (${route.operationId}): ${why}`, requestIdOf(res));
    };
    res.send = function sendChecked(body?: unknown) {
      if (!refused && (typeof body === 'string' || Buffer.isBuffer(body))) {
        const type = contentTypeOf(res, undefined);
        const why = headMismatch(answers, res.statusCode, type) ?? bodyMismatch(answers, res.statusCode, type, body);
        if (why) {
          const answer = refuse(why);
          res.status(500).type('application/problem+json');
          return send(JSON.stringify(answer));
        }
      }
      return send(body);
    };
    res.writeHead = function writeHeadChecked(status: number, ...rest: unknown[]) {
      const headers = rest.length && typeof rest[0] === 'string' ? rest[1] : rest[0];
      const why = refused ? undefined : headMismatch(answers, status, contentTypeOf(res, headers));
      if (why) {
        refuse(why);
        return writeHead(500, ...rest);
      }
      return writeHead(status, ...rest);
    } as Response['writeHead'];
    next();
  };
}
