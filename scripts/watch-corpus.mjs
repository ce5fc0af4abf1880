// Writes the watchdog's labelled corpus (docs/flock.md, "The watchdog"):
// data/watch/train.jsonl, calibration.jsonl and test.jsonl, one example a
// line: {request, thread[], kind, text, answers_request, states_fact_without_source,
// contradicts_earlier} (each label 0 or 1: what the three noul questions should say).
//
// An example is a request about a subject, the thread before the crow's
// message (sometimes earlier facts about the subject), and the crow's claim or
// deliver: on the subject or not, stating a fact with or without naming where
// it comes from, agreeing with the thread or contradicting it. The phrases are
// written by hand; a message is a frame with its slots filled.
//
// The three sets share no frame and no subject: every frame list below is cut
// in three (train, calibration, held-out), and so are the subjects, so the
// held-out numbers are on wording and subjects the classifiers never saw.
// Deterministic: `node scripts/watch-corpus.mjs` writes the same files.
import { mkdirSync, writeFileSync } from 'node:fs';

let seed = 36;
const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const pick = (a) => a[Math.floor(rnd() * a.length)];

// Subjects: what the request asks about, a fact about it with two values that disagree, and a place the fact could come from.
const subjects = [
  { s: 'the release notes', fact: (v) => `version 2.4 ships ${v}`, vals: ['on Monday', 'on Friday'], src: 'the changelog' },
  { s: 'the pricing page', fact: (v) => `the pro plan costs ${v} a month`, vals: ['$12', '$20'], src: 'docs/pricing.md' },
  { s: 'the launch date', fact: (v) => `the launch is ${v}`, vals: ['on 3 March', 'on 10 March'], src: 'the roadmap' },
  { s: 'the survey results', fact: (v) => `${v} of users want dark mode`, vals: ['62%', '35%'], src: 'the survey sheet' },
  { s: 'the budget', fact: (v) => `we have ${v} left this quarter`, vals: ['€40k', '€15k'], src: 'sheet "costs 2026"' },
  { s: 'the login bug', fact: (v) => `the bug started ${v}`, vals: ['in release 2.1', 'in release 2.3'], src: 'issue 37' },
  { s: 'the API latency', fact: (v) => `the p99 latency is ${v}`, vals: ['120 ms', '480 ms'], src: 'the dashboard' },
  { s: 'the team offsite', fact: (v) => `the offsite is ${v}`, vals: ['in May', 'in June'], src: 'the calendar invite' },
  { s: 'the migration', fact: (v) => `the migration takes ${v}`, vals: ['2 hours', '9 hours'], src: 'the runbook' },
  { s: 'the customer churn', fact: (v) => `churn was ${v} last month`, vals: ['3%', '9%'], src: 'the billing report' },
  { s: 'the onboarding email', fact: (v) => `the email is opened by ${v} of new users`, vals: ['70%', '25%'], src: 'the mail stats' },
  { s: 'the server costs', fact: (v) => `the servers cost ${v} a month`, vals: ['$900', '$2,400'], src: 'the cloud bill' },
  { s: 'the hiring plan', fact: (v) => `we hire ${v} engineers this year`, vals: ['4', '10'], src: 'the hiring doc' },
  { s: 'the test coverage', fact: (v) => `coverage is ${v}`, vals: ['81%', '54%'], src: 'the CI report' },
  { s: 'the support backlog', fact: (v) => `the backlog holds ${v} tickets`, vals: ['120', '45'], src: 'the helpdesk' },
];
// Unrelated rambles (off the request's subject).
const offtopic = {
  claim: [
    [() => `I'll take the ${pick(['pigeon census', 'office plants', 'karaoke playlist', 'lunch order'])} instead.`, () => `Taking something else: the ${pick(['coffee rota', 'team photo', 'holiday card'])}.`, () => `On it, I'll start with the ${pick(['parking rules', 'birthday list'])}.`],
    [() => `Claiming the ${pick(['quiz night', 'fridge cleanup', 'plant watering'])}, that seems more fun.`, () => `I'll work on my poem about ${pick(['rain', 'crows', 'autumn'])}.`],
    [() => `Mine: I'll reorganise the ${pick(['bookshelf', 'emoji set', 'desk plan'])}.`, () => `Picking up the ${pick(['music playlist', 'office map'])} now.`],
  ],
  deliver: [
    [() => `Here is a short story about ${pick(['a brave pigeon', 'a lost umbrella', 'a sleepy cat'])}.`, () => `Done: I wrote a limerick about ${pick(['Mondays', 'coffee', 'traffic'])}.`, () => `Here's my list of favourite ${pick(['films', 'sandwiches', 'board games'])}.`],
    [() => `Finished: a haiku about ${pick(['the sea', 'snow', 'birds'])}.`, () => `Result: I ranked the ${pick(['office chairs', 'lunch places'])} by comfort.`],
    [() => `All done, here are some thoughts on ${pick(['gardening', 'chess openings', 'jazz'])}.`, () => `Here is a recipe for ${pick(['pancakes', 'soup', 'bread'])}.`],
  ],
};
// On-subject frames, cut in three (train, calibration, held-out).
const claims = [
  [(s) => `I'll take ${s}.`, (s) => `On it: ${s} is mine.`, (s) => `Claiming ${s}, starting now.`, (s) => `I'll handle ${s} and report back.`],
  [(s) => `Taking ${s}; first results within the hour.`, (s) => `I've got ${s}.`],
  [(s) => `ok im on ${s} now`, (s) => `I take the work on ${s}, I begin now.`],
];
const delivers = [
  [(s, f) => `Here is ${s}: ${f}.`, (s, f) => `Done with ${s}. In short, ${f}.`, (s, f) => `Finished ${s}: ${f}, and the rest is below.`, (s, f) => `Result for ${s}: ${f}.`],
  [(s, f) => `Wrapped up ${s}; the main point is that ${f}.`, (s, f) => `${s[0].toUpperCase()}${s.slice(1)} is done: ${f}.`],
  [(s, f) => `done w ${s}, ${f}`, (s, f) => `I have finish ${s}, the result is that ${f}.`],
];
// How a source is named, and a deliver with no fact in it.
const sourced = [[(src) => ` (source: ${src})`, (src) => `, according to ${src}`, (src) => `; see ${src}`], [(src) => `, per ${src}`], [(src) => ` - from ${src}`]];
const factless = [
  [(s) => `Here is ${s}, reviewed; I fixed the wording and the headings.`, (s) => `Done with ${s}: tidied, shortened and checked for typos.`],
  [(s) => `Finished ${s}; the structure is clearer now.`],
  [(s) => `${s} is cleaned up, wording fixed`],
];
const requests = [
  [(s) => `Please look into ${s} and report back.`, (s) => `Can someone summarise ${s}?`, (s) => `I need an update on ${s}.`],
  [(s) => `Could you check ${s} for me?`],
  [(s) => `pls send me whats up with ${s}`],
];
// The thread: an earlier fact (sourced), or nothing relevant.
const earlier = [[(f, src) => `Earlier: ${f} (source: ${src}).`, (f) => `Inky: ${f}.`], [(f) => `Pepper said ${f}.`], [(f) => `owner: note that ${f}`]];
const noise = ['Morning all.', 'Thanks!', 'The standup moved to 10.'];

function examples(set, subs, n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const sub = pick(subs);
    const request = pick(requests[set])(sub.s);
    const kind = rnd() < 0.35 ? 'claim' : 'deliver';
    const onTopic = rnd() < 0.7;
    const thread = [];
    let label = { answers_request: onTopic ? 1 : 0, states_fact_without_source: 0, contradicts_earlier: 0 };
    let text;
    if (!onTopic) text = pick(offtopic[kind][set])();
    else if (kind === 'claim') text = pick(claims[set])(sub.s);
    else {
      // A deliver: a fact or not; sourced or not; with an earlier fact in the thread that it agrees with or contradicts.
      const r = rnd();
      if (r < 0.2) text = pick(factless[set])(sub.s);
      else {
        const withThread = rnd() < 0.55;
        const agree = rnd() < 0.5;
        // Either value may be the earlier one, so no value means "contradiction" by itself.
        const [first, second] = rnd() < 0.5 ? sub.vals : [sub.vals[1], sub.vals[0]];
        const v = agree || !withThread ? first : second;
        if (withThread) thread.push(pick(earlier[set])(sub.fact(first), sub.src));
        const named = rnd() < 0.5;
        text = pick(delivers[set])(sub.s, sub.fact(v) + (named ? pick(sourced[set])(sub.src) : ''));
        label = { answers_request: 1, states_fact_without_source: named ? 0 : 1, contradicts_earlier: withThread && !agree ? 1 : 0 };
      }
    }
    if (rnd() < 0.4) thread.unshift(pick(noise));
    out.push({ request, thread, kind, text, ...label });
  }
  return out;
}

const dir = new URL('../data/watch/', import.meta.url);
mkdirSync(dir, { recursive: true });
// Subjects cut in three too: 9 train, 3 calibration, 3 held-out.
const sets = [
  ['train.jsonl', 0, subjects.slice(0, 9), 900],
  ['calibration.jsonl', 1, subjects.slice(9, 12), 200],
  ['test.jsonl', 2, subjects.slice(12), 200],
];
for (const [file, set, subs, n] of sets) {
  const rows = examples(set, subs, n);
  writeFileSync(new URL(file, dir), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  console.log(`${file}: ${rows.length} examples`);
}
