// Writes Jev's training corpus, data/jev/train.jsonl (one {"text","kind","mode"?}
// a line). The phrases below are written by hand, per kind and per mode, in
// one plain voice (clean, sentence-case English of a few to twenty words); a
// message is a frame with its slots filled.
//
// The two other files are written by hand, not here, in voices this file never
// uses: data/jev/calibration.jsonl (fits the temperature: chat with emoji,
// corporate, British-polite, markdown, quoting) and data/jev/test.jsonl (the
// held-out set: typos and texting, non-native English, code snippets, very
// long and very short messages). The numbers `npm run jev:calibration` prints
// are measured on the latter, which neither training nor calibration sees.
// Deterministic: run `node scripts/jev-corpus.mjs` and the file comes out the same.
import { writeFileSync } from 'node:fs';

let seed = 14;
const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const pick = (a) => a[Math.floor(rnd() * a.length)];

const crow = ['Hugin', 'Munin', 'Pepper', 'Inky', 'Corvus', 'Sable', 'Jet', 'Ash'];
const thing0 = ['the launch copy', 'the pricing page', 'the onboarding email', 'the release notes', 'the API docs', 'the migration script', 'the test plan', 'the changelog', 'the landing page', 'the survey results', 'the budget sheet', 'the roadmap', 'the login flow', 'the error messages', 'the FAQ', 'the press kit'];
const file = ['notes/launch.md', 'docs/pricing.md', 'draft-v2.txt', 'report.pdf', 'spec/flock-events.md', 'the shared folder "Q3 plans"', 'PR #412', 'issue 37', 'the design board', 'sheet "costs 2026"', 'the wiki page on onboarding', 'commit 9e75cd7'];
const reason = ['it is outside what I know', 'I have no access to the data', 'my queue is full today', 'the owner said to hold it', 'it needs a decision I cannot make', 'another crow owns that area', 'the request is too vague to start'];
const thing = [
  ...thing0,
  'the retry logic', 'the CSV export', 'the login handler', 'the dashboard', 'the unit tests', 'the deploy script', 'the database schema', 'the blog post',
  'the newsletter', 'the quarterly report', 'the slide deck', 'the contract draft', 'the user interviews', 'the cache layer', 'the search page', 'the invoice template',
];
const topic = ['the weather', 'the deadline', 'lunch', 'the new logo', 'yesterday\'s demo', 'the coffee machine', 'the meeting', 'the team', 'the holiday', 'the office move', 'the football', 'the new chairs', 'the standup', 'the heat'];

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

// More of the same plain voice: the wording crows and people use most.
const who = () => pick(crow);
const more = {
  say: [
    () => `Good morning, ${who()}.`,
    () => `Thanks for the update on ${pick(thing)}.`,
    () => `I was away yesterday, catching up now.`,
    () => `That is a fair point.`,
    () => `I agree with ${who()} on this.`,
    () => `Sounds good to me.`,
    () => `Great work on ${pick(thing)}, everyone.`,
    () => `I am back from ${pick(topic)}.`,
    () => `Happy Friday, all.`,
    () => `Interesting, I did not know that.`,
    () => `No worries at all.`,
    () => `Let me think about ${pick(topic)} a little.`,
    () => `I enjoyed reading ${pick(thing)}.`,
    () => `We should celebrate when this ships.`,
    () => `Just a heads up: I will be offline this afternoon.`,
    () => `Congrats on the launch, ${who()}!`,
    () => `That is funny, ${who()}.`,
    () => `Yes, makes sense.`,
    () => `I see what you mean about ${pick(thing)}.`,
    () => `Hi everyone, glad to be here.`,
    () => `Busy day today.`,
    () => `Nothing new from me.`,
    () => `Well said.`,
    () => `Thank you all for the help this week.`,
    () => `Cool, thanks.`,
    () => `Hope ${pick(topic)} was fun.`,
    () => `I had the same thought about ${pick(topic)}.`,
    () => `Oops, my mistake earlier.`,
    () => `See you all tomorrow.`,
    () => `Right, understood.`,
  ],
  request: [
    () => `${who()}, could you look into ${pick(thing)}?`,
    () => `Can someone summarise ${pick(thing)} for me?`,
    () => `Please review ${pick(thing)} and leave comments.`,
    () => `I need ${pick(thing)} cleaned up before Monday.`,
    () => `Would someone investigate why ${pick(thing)} is slow?`,
    () => `Please refactor ${pick(thing)} so it is easier to read.`,
    () => `Could you add tests for ${pick(thing)}?`,
    () => `Can you deploy ${pick(thing)} to staging?`,
    () => `Find the bug in ${pick(thing)}, please.`,
    () => `Please make ${pick(thing)} work on mobile.`,
    () => `${who()}, please proofread ${pick(thing)} today.`,
    () => `Can you prepare ${pick(thing)} for the meeting?`,
    () => `I would like a draft of ${pick(thing)}.`,
    () => `Please collect the numbers for ${pick(thing)}.`,
    () => `Could you benchmark ${pick(thing)} and tell me the results?`,
    () => `Someone please debug ${pick(thing)}.`,
    () => `Can you write a short intro for ${pick(thing)}?`,
    () => `Please check whether ${pick(thing)} is up to date.`,
    () => `I need you to rewrite ${pick(thing)} in plain language.`,
    () => `Could you sort out ${pick(thing)} this week?`,
    () => `Please list the open questions about ${pick(thing)}.`,
    () => `Can you turn ${pick(thing)} into a checklist?`,
    () => `Would you mind updating ${pick(thing)}?`,
    () => `Please build a first version of ${pick(thing)}.`,
    () => `Can anybody help me with ${pick(thing)}?`,
  ],
  claim: [
    () => `I'll do it.`,
    () => `I'm on ${pick(thing)}.`,
    () => `Taking this request.`,
    () => `I will take care of ${pick(thing)}.`,
    () => `This one is mine, starting now.`,
    () => `I can handle that, give me an hour.`,
    () => `Sure, I'll pick it up.`,
    () => `Okay, I'm taking ${pick(thing)}.`,
    () => `I'll work on it this afternoon.`,
    () => `Assigning this to myself.`,
    () => `I'll get started on ${pick(thing)} now.`,
    () => `Happy to take this on.`,
    () => `I claim this one.`,
    () => `Let me handle it.`,
    () => `Yes, I'll own ${pick(thing)}.`,
    () => `I am working on it now.`,
    () => `I'll have a go at ${pick(thing)}.`,
    () => `Taking it; results by tonight.`,
    () => `Will do, starting shortly.`,
    () => `I'll look into it and report back.`,
    () => `On my way with ${pick(thing)}.`,
    () => `I've picked up ${pick(thing)}.`,
    () => `I'll tackle this.`,
    () => `Accepting this task.`,
    () => `I'll take the job.`,
  ],
  deliver: [
    () => `Here is ${pick(thing)}, finished.`,
    () => `Done. I updated ${pick(thing)} and checked it twice.`,
    () => `The review is complete: two issues, both fixed.`,
    () => `I found the cause: ${pick(thing)} was missing a check.`,
    () => `Here are my results for ${pick(thing)}.`,
    () => `Finished the draft, it is below.`,
    () => `The fix is in: ${pick(thing)} works again.`,
    () => `All done with ${pick(thing)}.`,
    () => `The summary: costs are down and the plan holds.`,
    () => `Here's what I came up with for ${pick(thing)}.`,
    () => `I've completed ${pick(thing)}; the tests pass.`,
    () => `Result below: option A is faster.`,
    () => `The benchmark finished: 40 ms on average.`,
    () => `I rewrote ${pick(thing)}; here is the new text.`,
    () => `Deployed ${pick(thing)} to staging, it is live.`,
    () => `My answer: yes, it is safe to ship.`,
    () => `Here is the checklist you asked for.`,
    () => `Completed. The numbers are below.`,
    () => `I merged the change to ${pick(thing)}.`,
    () => `The answer is in this message: three steps, listed below.`,
    () => `Finished testing ${pick(thing)}; everything works.`,
    () => `Here you are: the new version of ${pick(thing)}.`,
    () => `Done and pushed.`,
    () => `I wrote the tests; all green.`,
    () => `Report: ${pick(thing)} has five open problems, listed here.`,
  ],
  refer: [
    () => `The details are in ${pick(file)}.`,
    () => `You can find it in ${pick(file)}.`,
    () => `I put everything in ${pick(file)}.`,
    () => `${pick(file)} has what you need.`,
    () => `See the notes in ${pick(file)}.`,
    () => `It is documented in ${pick(file)}.`,
    () => `The full text lives in ${pick(file)}.`,
    () => `Look at ${pick(file)} for the numbers.`,
    () => `The draft is saved as ${pick(file)}.`,
    () => `Related: ${pick(file)}.`,
    () => `More in ${pick(file)}.`,
    () => `I linked it: ${pick(file)}.`,
    () => `The spec is ${pick(file)}.`,
    () => `Everything is written up in ${pick(file)}.`,
    () => `Please read ${pick(file)} first, it explains the background.`,
    () => `Same as in ${pick(file)}.`,
    () => `The old discussion is in ${pick(file)}.`,
    () => `Reference: ${pick(file)}.`,
    () => `See ${pick(file)}, I won't paste it here.`,
    () => `You'll find the list in ${pick(file)}.`,
  ],
  decline: [
    () => `I can't do this one, sorry.`,
    () => `Sorry, ${pick(reason)}, so I'll pass.`,
    () => `I'm declining this request: ${pick(reason)}.`,
    () => `Not me, I'm afraid; ${pick(reason)}.`,
    () => `I have to refuse ${pick(thing)}.`,
    () => `I won't take this, ${pick(reason)}.`,
    () => `Sorry, I'm unable to do ${pick(thing)}.`,
    () => `I cannot help with this, ${pick(reason)}.`,
    () => `No, I can't take it on.`,
    () => `I'll have to say no: ${pick(reason)}.`,
    () => `This is not for me, ${pick(reason)}.`,
    () => `I must decline, sorry.`,
    () => `Please ask someone else, ${pick(reason)}.`,
    () => `I'm not able to take ${pick(thing)}.`,
    () => `Sorry, no capacity for this.`,
    () => `I refuse, ${pick(reason)}.`,
    () => `I'd better not take this one, ${pick(reason)}.`,
    () => `Can't help, ${pick(reason)}.`,
    () => `I'm out on this one.`,
    () => `Unfortunately no, ${pick(reason)}.`,
  ],
};
for (const [k, fs] of Object.entries(more)) frames[k].push(...fs);

const moreModes = {
  solo: [
    () => `${who()}, please fix ${pick(thing)}.`,
    () => `One crow is enough: review ${pick(thing)}.`,
    () => `Could one of you summarise ${pick(thing)}?`,
    () => `Please update ${pick(thing)}.`,
    () => `Can you check ${pick(thing)} for errors?`,
    () => `I need a single owner for ${pick(thing)}.`,
    () => `${who()}, would you draft ${pick(thing)} for me?`,
    () => `Someone please translate ${pick(thing)}.`,
    () => `Could you test ${pick(thing)} on Firefox?`,
    () => `Please write ${pick(thing)}.`,
    () => `Fix the typo in ${pick(thing)}, please.`,
    () => `Can somebody look at ${pick(thing)}?`,
    () => `${who()}, you handle ${pick(thing)}.`,
    () => `Please investigate ${pick(thing)} and tell me what you find.`,
    () => `Would you shorten ${pick(thing)}?`,
  ],
  conspiracy: [
    () => `I want each of you to review ${pick(thing)} separately.`,
    () => `Everyone, read ${pick(thing)} and give me your own opinion.`,
    () => `Several opinions please on ${pick(thing)}.`,
    () => `Each crow, take a different angle on ${pick(thing)}.`,
    () => `All of you, critique ${pick(thing)} independently.`,
    () => `I'd like every one of you to propose a title for ${pick(thing)}.`,
    () => `Give me a few different views on ${pick(thing)}: security, cost and style.`,
    () => `Multiple reviewers wanted for ${pick(thing)}, each with your own focus.`,
    () => `Each of you, tell me what worries you about ${pick(thing)}.`,
    () => `Let's hear everyone's take on ${pick(thing)}.`,
    () => `I want three independent reviews of ${pick(thing)}.`,
    () => `Everybody please suggest your own fix for ${pick(thing)}.`,
    () => `Two or three of you, judge ${pick(thing)} from different perspectives.`,
    () => `Each of you read ${pick(thing)} as a different user would.`,
    () => `I'd like competing proposals for ${pick(thing)}.`,
  ],
  split: [
    () => `Split ${pick(thing)} between you: ${who()} does the first part, ${who()} the rest.`,
    () => `Divide ${pick(thing)} into sections and take one each.`,
    () => `${who()} takes the front end of ${pick(thing)}, ${who()} the back end.`,
    () => `Break the work on ${pick(thing)} into parts, one per crow.`,
    () => `Share out ${pick(thing)}: each of you takes a chapter.`,
    () => `Let's split ${pick(thing)}: one does the research, another the writing.`,
    () => `Please divide up ${pick(thing)} so nobody does it all.`,
    () => `Each crow takes one section of ${pick(thing)}.`,
    () => `Split the review of ${pick(thing)}: half each.`,
    () => `${who()} handles the tests, ${who()} handles the docs for ${pick(thing)}.`,
    () => `Cut ${pick(thing)} into three pieces and assign them.`,
    () => `One of you does pages 1 to 5 of ${pick(thing)}, another pages 6 to 10.`,
    () => `Parcel out the tasks in ${pick(thing)} among yourselves.`,
    () => `Split up ${pick(thing)} by language: one crow per language.`,
    () => `Break ${pick(thing)} down and share the pieces.`,
  ],
};
for (const [m, fs] of Object.entries(moreModes)) modes[m].push(...fs);

// Code and tools come up in every kind: the same names across the kinds, so
// they say nothing about the kind by themselves. Negations too ("not", "no")
// outside declines, and bare imperatives as requests.
const code = ['the parseDate function', 'the getUser call', 'src/app.ts', 'the SQL query', 'the fetch call', 'the build', 'npm test', 'the null check', 'the webpack config', 'the sort function', 'the API handler', 'the env variable'];
const verb = ['update', 'review', 'fix', 'rewrite', 'check', 'shorten', 'translate', 'proofread', 'test', 'document', 'clean up', 'summarise', 'write', 'draft', 'look into', 'merge', 'investigate', 'build', 'add', 'remove', 'rename', 'prepare', 'compare', 'find', 'plan', 'outline', 'sketch', 'tidy'];
const more2 = {
  say: [
    () => `Fun fact: ${pick(code)} is older than all of us.`,
    () => `I like how ${pick(code)} reads after the cleanup.`,
    () => `It is not a problem, all good here.`,
    () => `No worries, nothing to do.`,
    () => `Not bad at all, ${who()}.`,
    () => `${pick(code)} was fast today, nice to see.`,
    () => `Ha, ${pick(code)} printed a funny warning again.`,
    () => `In my opinion ${pick(topic)} is fine.`,
    () => `For me everything is fine today.`,
    () => `Noted, thank you.`,
    () => `Understood, nothing from my side.`,
    () => `Today I learned something new about ${pick(code)}.`,
  ],
  request: [
    () => `${who()}: ${pick(verb)} ${pick(thing)}.`,
    () => `${who()}, ${pick(verb)} ${pick(thing)} today.`,
    () => `${pick(verb)[0].toUpperCase()}${pick(verb).slice(1)} ${pick(thing)}, please.`,
    () => `Can you make ${pick(code)} not crash on empty input?`,
    () => `Please check why ${pick(code)} does not work.`,
    () => `Someone please ${pick(verb)} ${pick(code)}.`,
    () => `Could you ${pick(verb)} ${pick(code)} before the release?`,
    () => `Need someone to ${pick(verb)} ${pick(thing)}.`,
    () => `${who()} - ${pick(verb)} ${pick(thing)} please.`,
    () => `I need ${pick(code)} fixed so it stops failing.`,
    () => `${pick(verb)[0].toUpperCase()}${pick(verb).slice(1)} ${pick(thing)}.`,
    () => `${pick(verb)[0].toUpperCase()}${pick(verb).slice(1)} it, please.`,
    () => `Go ${pick(verb)} ${pick(thing)}.`,
  ],
  claim: [
    () => `I will do it.`,
    () => `I will start on ${pick(thing)} now.`,
    () => `I am responsible for ${pick(thing)} from now.`,
    () => `I'll take ownership of ${pick(thing)}.`,
    () => `This task is for me, I start now.`,
    () => `I'm doing ${pick(thing)} now.`,
    () => `I'll start by running ${pick(code)}, then fix it.`,
    () => `Taking this; first I'll look at ${pick(code)}.`,
    () => `Me, I'll take ${pick(thing)}.`,
    () => `I'll begin right away.`,
  ],
  deliver: [
    () => `It works again now: ${pick(code)} was the problem.`,
    () => `Everything is green now.`,
    () => `I went through ${pick(thing)} and fixed every problem I found.`,
    () => `All good now, ${pick(code)} passes.`,
    () => `Fixed ${pick(code)}; the tests pass.`,
    () => `I changed ${pick(code)} and it works now.`,
    () => `I documented ${pick(thing)}; it is complete.`,
    () => `${pick(thing)} is done and live now.`,
    () => `Shipped ${pick(thing)}.`,
    () => `I checked ${pick(thing)}: all correct except one line, which I corrected.`,
  ],
  refer: [
    () => `The log is in ${pick(file)}.`,
    () => `See ${pick(code)} in ${pick(file)}.`,
    () => `Check ${pick(file)}, it is there.`,
    () => `Instead of pasting it here, I saved it to ${pick(file)}.`,
    () => `${pick(file)} explains why.`,
    () => `The output of ${pick(code)} is saved in ${pick(file)}.`,
  ],
  decline: [
    () => `I can't, ${pick(code)} needs access I don't have.`,
    () => `Not taking this: ${pick(reason)}.`,
    () => `I have to turn this down, ${pick(reason)}.`,
    () => `I don't want to take this, ${pick(reason)}.`,
    () => `Sorry, I can't run ${pick(code)}: ${pick(reason)}.`,
    () => `No, ${pick(reason)}.`,
  ],
};
for (const [k, fs] of Object.entries(more2)) frames[k].push(...fs);

// Short forms of each kind, and longer messages: a kind's sentence with a
// neutral sentence of context before or after it (context says nothing about
// the kind, so the classifier learns to look past it).
const short = {
  say: ['Thanks.', 'Okay.', 'Nice.', 'Agreed.', 'Haha.', 'Morning.', 'Same here.', 'Fair enough.', 'Good point.', 'Sure thing, thanks.', 'Yes.', 'Fine by me.', 'Interesting.', 'Cheers.', 'Hello!'],
  request: ['Review, please.', 'Summary, please.', 'Fix this, please.', 'Can you help?', 'Please check it.', 'Draft it, please.', 'Test this for me?', 'Someone update it?', 'Please translate it.', 'Could you look?', `${pick(crow)}: the changelog, please.`, `${pick(crow)}, the FAQ please.`, 'Proofread this, please.', 'Need a review.', 'Please estimate it.'],
  claim: ['Mine.', 'Dibs.', 'On it.', 'Taking it.', 'I got it.', "I've got this.", 'Me, I will.', 'Claimed.', "I'll do it.", 'Leave it to me.', 'Yes, mine.', 'My task now.', 'I take it.', 'Starting now.', 'This is mine.'],
  deliver: ['Done.', 'Fixed.', 'Shipped.', 'Finished.', 'Delivered.', 'Completed.', 'Here it is.', 'Here you go.', 'All fixed now.', 'Works now.', 'Tests pass now.', 'Merged.', 'Deployed.', 'Ready, see below.', 'Result below.'],
  refer: ['See the wiki.', 'See PR #412.', 'In issue 37.', 'Check the design board.', 'It is in notes/launch.md.', 'Look at report.pdf.', 'See the spec.', 'In the shared folder.', 'Per commit 9e75cd7.', 'Ref: docs/pricing.md.'],
  decline: ['No.', 'Pass.', 'Sorry, no.', "Can't.", 'Not me.', 'I decline.', "I can't, sorry.", 'Not possible for me.', 'No, sorry.', "I won't.", 'Unable to.', 'Not this time.', 'I must pass.', 'Refused.', 'Not for me.'],
};
const context = [
  'We talked about this at the standup.', 'The launch is next week.', 'Customers mentioned it twice.', 'It has been on my mind for a while.',
  'The team has been busy.', 'This came up in yesterday\'s review.', 'The numbers changed last month.', 'I read the whole thread first.',
  'The deadline moved to Friday.', 'Support keeps getting questions about it.', 'It is a small change.', 'The old version is from last year.',
  'I looked at the history of this.', 'This matters for the release.', 'Some of this is in the code already.',
];
const composed = {
  say: [() => `${pick(context)} ${pick(frames.say)()}`, () => `${pick(frames.say)()} ${pick(context)}`],
  request: [() => `${pick(context)} ${pick(frames.request)()}`, () => `${pick(frames.request)()} ${pick(context)}`],
  claim: [() => `${pick(context)} ${pick(frames.claim)()}`, () => `${pick(frames.claim)()} ${pick(context)}`],
  deliver: [() => `${pick(context)} ${pick(frames.deliver)()}`, () => `${pick(frames.deliver)()} ${pick(context)}`],
  refer: [() => `${pick(context)} ${pick(frames.refer)()}`, () => `${pick(frames.refer)()} ${pick(context)}`],
  decline: [() => `${pick(context)} ${pick(frames.decline)()}`, () => `${pick(frames.decline)()} ${pick(context)}`],
};

const train = [];
const add = (frameList, per, row) =>
  frameList.forEach((f) => {
    const seen = new Set();
    for (let k = 0; k < per * 3 && seen.size < per; k++) {
      const text = f();
      if (seen.has(text)) continue;
      seen.add(text);
      train.push(JSON.stringify(row(text)));
    }
  });
for (const [kind, fs] of Object.entries(frames)) add(fs, 4, (text) => ({ text, kind }));
for (const [mode, fs] of Object.entries(modes)) add(fs, 4, (text) => ({ text, kind: 'request', mode }));
// Bare imperatives, one per verb: a request needs no "please" or "can you".
for (const v of verb) {
  const V = v[0].toUpperCase() + v.slice(1);
  train.push(JSON.stringify({ text: `${V} ${pick(thing)}.`, kind: 'request' }), JSON.stringify({ text: `${V} it.`, kind: 'request' }), JSON.stringify({ text: `${pick(crow)}, ${v} ${pick(code)}.`, kind: 'request' }));
}
for (const [kind, ts] of Object.entries(short)) for (const text of ts) train.push(JSON.stringify({ text, kind }));
for (const [kind, fs] of Object.entries(composed)) add(fs, 15, (text) => ({ text, kind }));
for (const [mode, fs] of Object.entries(modes)) add([() => `${pick(context)} ${pick(fs)()}`, () => `${pick(fs)()} ${pick(context)}`], 8, (text) => ({ text, kind: 'request', mode }));
writeFileSync(new URL('../data/jev/train.jsonl', import.meta.url), train.join('\n') + '\n');
console.log(`train ${train.length} lines`);
