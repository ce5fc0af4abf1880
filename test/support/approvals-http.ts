// The approvals API as a test reads and answers it over HTTP (local mode: `by`
// is a label the server keeps as the decider).

/** The pending requests. */
export async function pendingOf(url: string): Promise<any[]> {
  return ((await (await fetch(url + '/approvals')).json()) as { pending: any[] }).pending;
}

/** The pending requests and the newest 100 closed ones. */
export async function approvalsOf(url: string): Promise<{ pending: any[]; recent: any[] }> {
  return (await (await fetch(url + '/approvals?recent=100')).json()) as { pending: any[]; recent: any[] };
}

/** A decision through the one decide endpoint; its status and body. */
export async function decide(url: string, id: string, decision: 'allow' | 'deny', by?: string): Promise<{ status: number; json: any }> {
  const r = await fetch(`${url}/approvals/${encodeURIComponent(id)}/decision`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ decision, by }) });
  return { status: r.status, json: await r.json() };
}
