import { AppError, ValidationFailed } from '../../domain/errors.js';

/**
 * The domain's refusals of an input the CLI passes unchecked (a 400 of the command line): the
 * panel's schemas already refuse most, and what only the domain can judge (a document URL that
 * does not parse, a pattern that is not safe) is answered as the 422 of the field it concerns, the
 * API's way of saying which field and why. `fieldOf` maps the domain's code to the field's JSON
 * pointer ('' for the body as a whole); any other error passes unchanged.
 */
export function fieldErrors(fieldOf: Record<string, string>): <T>(run: () => Promise<T>) => Promise<T> {
  return async (run) => {
    try {
      return await run();
    } catch (err) {
      const pointer = err instanceof AppError ? fieldOf[err.code] : undefined;
      if (pointer !== undefined) throw new ValidationFailed([{ pointer, code: 'value_error', message: err instanceof Error ? err.message : String(err) }]);
      throw err;
    }
  };
}
