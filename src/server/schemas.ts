// The body schemas' shared pieces (TypeBox), so one field has one rule in
// every app. Each carries a `hint`: what the field is, in the words an error
// message uses (route.ts `describeBodyError`). Patterns here are ours, fixed
// and linear; a caller's pattern is never compiled.

import { Type, type TString } from '@sinclair/typebox';
import { LOGIN_PATTERN, PROJECT_ID_PATTERN } from '../core/identity.js';

/** A person's login. */
export const LOGIN = Type.String({ pattern: LOGIN_PATTERN.source, hint: '1 to 64 lowercase letters, digits, ".", "-" or "_", starting with a letter or digit' });

/** A password: 8 to 200 characters. */
export const PASSWORD = Type.String({ minLength: 8, maxLength: 200, hint: '8 to 200 characters' });

/** A project id as accounts make it. */
export const PROJECT_ID = Type.String({ pattern: PROJECT_ID_PATTERN.source, hint: 'a project id: 1 to 64 lowercase letters, digits, "-" or "_"' });

/** A role in a project. */
export const ROLE = Type.Union([Type.Literal('owner'), Type.Literal('editor'), Type.Literal('viewer')]);

/** A display name or label: any string up to `max` characters as sent (stored with its whitespace collapsed). */
export const NAME = (max: number): TString => Type.String({ maxLength: max });

/** Text that must say something: at least one non-space character, at most `max` characters, kept as sent. */
export const TEXT = (max: number): TString => Type.String({ maxLength: max, pattern: '\\S', hint: 'a non-empty string' });

/** An id of the form the apps mint and accept (letters, digits, "_", "-"). */
export const ID = (max = 64): TString => Type.String({ minLength: 1, maxLength: max, pattern: '^[A-Za-z0-9_-]+$', hint: `1 to ${max} letters, digits, "-" or "_"` });
