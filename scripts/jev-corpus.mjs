// Writes Jev's labelled corpus: data/jev/train.jsonl and data/jev/test.jsonl
// (one {"text","kind","mode"?} a line). The phrases below are written by
// hand, per kind and per mode; a message is a frame with its slots filled.
// The held-out set uses frames the training set never sees (every fifth
// frame of each kind), so the measured accuracy is on unseen wording.
// Deterministic: run `node scripts/jev-corpus.mjs` and the files come out the same.
import { writeFileSync } from 'node:fs';

let seed = 14;
const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const pick = (a) => a[Math.floor(rnd() * a.length)];

const crow = ['Hugin', 'Munin', 'Pepper', 'Inky', 'Corvus', 'Sable', 'Jet', 'Ash'];
const thing = ['the launch copy', 'the pricing page', 'the onboarding email', 'the release notes', 'the API docs', 'the migration script', 'the test plan', 'the changelog', 'the landing page', 'the survey results', 'the budget sheet', 'the roadmap', 'the login flow', 'the error messages', 'the FAQ', 'the press kit'];
const file = ['notes/launch.md', 'docs/pricing.md', 'draft-v2.txt', 'report.pdf', 'spec/flock-events.md', 'the shared folder "Q3 plans"', 'PR #412', 'issue 37', 'the design board', 'sheet "costs 2026"', 'the wiki page on onboarding', 'commit 9e75cd7'];
const reason = ['it is outside what I know', 'I have no access to the data', 'my queue is full today', 'the owner said to hold it', 'it needs a decision I cannot make', 'another crow owns that area', 'the request is too vague to start'];
const topic = ['the weather', 'the deadline', 'lunch', 'the new logo', 'yesterday\'s demo', 'the coffee machine', 'the meeting', 'the team'];

const frames = {
  say: [
    () => `Morning all, hope ${pick(topic)} treats you well.`,
    () => `I think ${pick(topic)} went fine.`,
    () => `Thanks ${pick(crow)}, that was kind.`,
    () => `Nice, good to hear.`,
    () => `Just so you know, I'll be quiet for an hour.`,
    () => `Ha, ${pick(topic)} again.`,
    () => `Agreed, that sounds right to me.`,
    () => `FYI I noticed ${pick(topic)} changed, no action needed.`,
    () => `Welcome to the nest, ${pick(crow)}!`,
    () => `Interesting point about ${pick(thing)}.`,
    () => `ok`,
    () => `Good night everyone.`,
    () => `That made me laugh.`,
    () => `I like how ${pick(thing)} reads now.`,
    () => `Noted, thanks.`,
  ],
  request: [
    () => `@${pick(crow)} can you review ${pick(thing)}?`,
    () => `Please draft ${pick(thing)} by tomorrow.`,
    () => `Could someone check ${pick(thing)} for typos?`,
    () => `I need a summary of ${pick(thing)}.`,
    () => `${pick(crow)}, would you rewrite ${pick(thing)} to be shorter?`,
    () => `Can anyone find out why ${pick(thing)} is failing?`,
    () => `Please translate ${pick(thing)} into French.`,
    () => `Would you compare ${pick(thing)} with ${pick(thing)} and tell me which is better?`,
    () => `Write three options for ${pick(thing)}, please.`,
    () => `Can you fix ${pick(thing)} before the release?`,
    () => `Need someone to test ${pick(thing)} on mobile.`,
    () => `Could you please estimate the work on ${pick(thing)}?`,
    () => `Please update ${pick(thing)} with the new prices.`,
    () => `Help me plan ${pick(thing)} for next week?`,
    () => `Research what competitors do for ${pick(thing)} and report back.`,
  ],
  claim: [
    () => `I'll take this one.`,
    () => `On it: I'll handle ${pick(thing)}.`,
    () => `Claiming this, starting now.`,
    () => `I've got it, working on ${pick(thing)}.`,
    () => `Mine. Expect something within the hour.`,
    () => `I can do that, taking it.`,
    () => `Taking ${pick(thing)}; will report back.`,
    () => `Leave it with me.`,
    () => `I'm picking this up.`,
    () => `Consider it claimed, I'll start on ${pick(thing)}.`,
    () => `Dibs on this request.`,
    () => `I'll own this and ping you when done.`,
    () => `Starting on it right away.`,
    () => `I will handle the review myself.`,
    () => `Got this one, on my way.`,
  ],
  deliver: [
    () => `Done: here is ${pick(thing)}, revised and shorter.`,
    () => `Here's the summary you asked for: three points, all fixed.`,
    () => `Finished. ${pick(thing)} is updated with the new numbers.`,
    () => `Delivered: the draft is below.`,
    () => `Here you go, the review of ${pick(thing)} with my notes.`,
    () => `All done, I fixed the typos and tightened the intro.`,
    () => `Result: ${pick(thing)} is better, option B wins on clarity.`,
    () => `Completed the comparison; the first one is cheaper and clearer.`,
    () => `The translation is ready, attached in full.`,
    () => `Here are the three options you wanted.`,
    () => `Fixed it: the failure came from a missing header.`,
    () => `Estimate ready: about two days of work.`,
    () => `Final version of ${pick(thing)} below, ready to ship.`,
    () => `Wrapped up the research, findings follow.`,
    () => `Here is what I found after testing on mobile.`,
  ],
  refer: [
    () => `See ${pick(file)} for the details.`,
    () => `The numbers are in ${pick(file)}.`,
    () => `Pointing you to ${pick(file)} rather than pasting it.`,
    () => `It's all in ${pick(file)}, section two.`,
    () => `Refer to ${pick(file)}.`,
    () => `Check ${pick(file)}, it has the latest draft.`,
    () => `The earlier version lives at ${pick(file)}.`,
    () => `Link: ${pick(file)}.`,
    () => `Background reading: ${pick(file)}.`,
    () => `As written in ${pick(file)}, nothing changed.`,
    () => `Have a look at ${pick(file)}.`,
    () => `The source is ${pick(file)}.`,
    () => `Attached by name: ${pick(file)}.`,
    () => `Everything you need is in ${pick(file)} and ${pick(file)}.`,
    () => `For context see ${pick(file)}.`,
  ],
  decline: [
    () => `Sorry, I can't take this: ${pick(reason)}.`,
    () => `I have to pass on this one, ${pick(reason)}.`,
    () => `Declining, ${pick(reason)}.`,
    () => `Not something I can do, ${pick(reason)}.`,
    () => `I won't be able to help with ${pick(thing)}; ${pick(reason)}.`,
    () => `No, I'll skip this, ${pick(reason)}.`,
    () => `Unfortunately I must refuse: ${pick(reason)}.`,
    () => `I'm not the right crow for this, ${pick(reason)}.`,
    () => `Can't do it, sorry.`,
    () => `I'm going to decline ${pick(thing)}, ${pick(reason)}.`,
    () => `Pass. ${pick(reason)}.`,
    () => `I would rather not take this; ${pick(reason)}.`,
    () => `Unable to help here, ${pick(reason)}.`,
    () => `Have to say no to this one.`,
    () => `Count me out: ${pick(reason)}.`,
  ],
};

// Requests with their mode: solo (one crow), conspiracy (several crows, distinct readings), split (parts shared out).
const modes = {
  solo: [
    () => `@${pick(crow)} please proofread ${pick(thing)}.`,
    () => `Can one of you fix ${pick(thing)}?`,
    () => `${pick(crow)}, write ${pick(thing)} yourself please.`,
    () => `Someone please rename ${pick(thing)}.`,
    () => `I need one person to check ${pick(thing)}.`,
    () => `Quick one: update ${pick(thing)} with today's date.`,
    () => `Could you draft ${pick(thing)}?`,
    () => `Please send me ${pick(thing)} when it is ready.`,
    () => `${pick(crow)}, can you handle ${pick(thing)} alone?`,
    () => `Just one of you: shorten ${pick(thing)}.`,
  ],
  conspiracy: [
    () => `I want several takes on ${pick(thing)}: each of you read it your own way.`,
    () => `Everyone, give me your own critique of ${pick(thing)}, different angles please.`,
    () => `Three of you, review ${pick(thing)} independently from distinct lenses.`,
    () => `Let's get multiple perspectives on ${pick(thing)}: legal, tone and cost.`,
    () => `Each of you, propose your own version of ${pick(thing)}.`,
    () => `I'd like a few independent opinions on ${pick(thing)}.`,
    () => `Different readings wanted: how does ${pick(thing)} land with you each?`,
    () => `Brainstorm together on ${pick(thing)}, everyone one distinct idea.`,
    () => `Several crows please, each critique ${pick(thing)} from a different angle.`,
    () => `Give me competing takes on ${pick(thing)} from all of you.`,
  ],
  split: [
    () => `Split ${pick(thing)} up: one of you does the intro, another the pricing section.`,
    () => `Divide the work on ${pick(thing)}: part one to ${pick(crow)}, part two to ${pick(crow)}.`,
    () => `Break ${pick(thing)} into pieces and share them out.`,
    () => `${pick(crow)} takes the first half of ${pick(thing)}, ${pick(crow)} the second half.`,
    () => `Let's parcel out ${pick(thing)}: each section to a different crow.`,
    () => `Share the chapters of ${pick(thing)} between you, one chapter each.`,
    () => `Divide and conquer: split ${pick(thing)} into parts.`,
    () => `Part A for one crow, part B for another, on ${pick(thing)}.`,
    () => `Carve up ${pick(thing)} so each of you does a slice.`,
    () => `Split the translation of ${pick(thing)} by section.`,
  ],
};

const train = [];
const test = [];
const add = (frameList, label, per, row) =>
  frameList.forEach((f, i) => {
    const into = i % 5 === 4 ? test : train;
    const seen = new Set();
    for (let k = 0; k < per * 3 && seen.size < per; k++) {
      const text = f();
      if (seen.has(text)) continue;
      seen.add(text);
      into.push(JSON.stringify(row(text)));
    }
  });
for (const [kind, fs] of Object.entries(frames)) add(fs, kind, 4, (text) => ({ text, kind }));
for (const [mode, fs] of Object.entries(modes)) add(fs, mode, 4, (text) => ({ text, kind: 'request', mode }));
writeFileSync(new URL('../data/jev/train.jsonl', import.meta.url), train.join('\n') + '\n');
writeFileSync(new URL('../data/jev/test.jsonl', import.meta.url), test.join('\n') + '\n');
console.log(`train ${train.length} lines, test ${test.length} lines`);
