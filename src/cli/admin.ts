// `roost admin`: what must be done at the machine, before anyone can sign in.
//
//   roost admin create-owner --login ann [--name "Ann Lee"] [--password-stdin]
//                            [--data ./.roost] [--db postgres://...]
//
// Writes the events straight to the store (the server need not run; with
// SQLite, stop it first or restart it afterwards so it folds the new account).
// The first owner administers accounts and owns the `default` project.

import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { openStore } from '../storage/index.js';
import { createOwner } from './owner.js';

const HELP = `usage:
  roost admin create-owner --login NAME [--name "Full Name"] [--password-stdin] [--data ./.roost] [--db postgres://...]
    Creates an administrator who owns the default project. Without --password-stdin
    the password is asked for on the terminal.
`;

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

/** Asks on the terminal without echoing what is typed. */
function ask(prompt: string): Promise<string> {
  return new Promise((ok, fail) => {
    const stdin = process.stdin;
    if (!stdin.isTTY) {
      fail(new Error('no terminal to ask for a password on; pass it with --password-stdin'));
      return;
    }
    process.stdout.write(prompt);
    stdin.setRawMode(true);
    stdin.resume();
    let s = '';
    const onData = (b: Buffer) => {
      for (const ch of b.toString('utf8')) {
        if (ch === '\r' || ch === '\n') {
          stdin.setRawMode(false);
          stdin.pause();
          stdin.off('data', onData);
          process.stdout.write('\n');
          ok(s);
          return;
        }
        if (ch === '\u0003') {
          stdin.setRawMode(false);
          fail(new Error('cancelled'));
          return;
        }
        if (ch === '\u007f') s = s.slice(0, -1);
        else s += ch;
      }
    };
    stdin.on('data', onData);
  });
}

export async function adminCommand(argv: string[]): Promise<void> {
  const [sub, ...rest] = argv;
  if (sub !== 'create-owner') {
    process.stdout.write(HELP);
    if (sub && sub !== 'help' && sub !== '--help') throw new Error(`unknown admin command "${sub}"`);
    return;
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      login: { type: 'string' },
      name: { type: 'string' },
      'password-stdin': { type: 'boolean' },
      data: { type: 'string' },
      db: { type: 'string' },
    },
  });
  if (!values.login) throw new Error('--login is required\n\n' + HELP);
  let password: string;
  if (values['password-stdin']) password = await readStdin();
  else {
    password = await ask(`password for ${values.login}: `);
    if ((await ask('again: ')) !== password) throw new Error('the passwords differ');
  }
  const store = await openStore({ db: values.db ?? process.env.ROOST_DB, dataDir: resolve(values.data ?? process.env.ROOST_DATA ?? '.roost') });
  try {
    const { uid } = await createOwner(store, values.login, password, values.name);
    console.log(`created ${values.login} (${uid}): administrator, owner of project "default". Start (or restart) roost serve and sign in.`);
  } finally {
    await store.close();
  }
}
