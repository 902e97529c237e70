// One inquiry (GET /inbox/inquiries/:reference; the notification mail links here) and its actions:
// state, spam / not spam, requeue, and the erase of its sender behind a confirmation.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { normaliseReference, REFERENCE_PATTERN } from '../../inquiries/reference.js';
import type { InboxState } from '../../storage/ports-inbox.js';
import { DONE_NOTES, type DoneNote, erasePage, inquiryPage } from '../../web/inbox/inquiry.js';
import { messagePage } from '../../web/inbox/layout.js';
import { formField, guardChange, type InboxHttp, pageContext, requireSession, sendHtml } from './context.js';

const STATES: readonly InboxState[] = ['new', 'read', 'archived'];

const referenceOf = (request: FastifyRequest) => {
  const reference = normaliseReference((request.params as { reference: string }).reference);
  return REFERENCE_PATTERN.test(reference) ? reference : undefined;
};

export function inquiryRoutes(app: FastifyInstance, http: InboxHttp, banner: () => Promise<string>) {
  const notFound = (reply: FastifyReply, request: FastifyRequest, session?: Parameters<typeof pageContext>[1]) =>
    sendHtml(
      reply,
      404,
      messagePage(
        pageContext(http, session),
        'No such inquiry',
        `There is no inquiry ${String((request.params as { reference: string }).reference)} (it may have been erased).`,
        `<p><a href="${http.root}">All inquiries</a></p>`,
      ),
    );
  const backTo = (reply: FastifyReply, reference: string, done: DoneNote) =>
    reply.redirect(`${http.root}/inquiries/${reference}?done=${done}`, 303);
  const badForm = (reply: FastifyReply, session: Parameters<typeof pageContext>[1]) =>
    sendHtml(
      reply,
      400,
      messagePage(pageContext(http, session), 'Not an action the inbox knows', "The form sent was not one of the inbox's."),
    );

  app.get('/inbox/inquiries/:reference', async (request, reply) => {
    const session = await requireSession(http, request, reply);
    if (session === undefined) return reply;
    const reference = referenceOf(request);
    let full = reference && (await http.service.find(reference));
    if (!reference || !full) return notFound(reply, request, session);
    // Opening a new inquiry reads it, as in any mailbox.
    if (full.status === 'new') {
      await http.service.setState(reference, 'read');
      full = { ...full, status: 'read' };
    }
    const { done } = request.query as { done?: unknown };
    const note = typeof done === 'string' && Object.hasOwn(DONE_NOTES, done) ? (done as DoneNote) : undefined;
    return sendHtml(reply, 200, inquiryPage(pageContext(http, session), full, note, await banner()));
  });

  app.post('/inbox/inquiries/:reference/state', async (request, reply) => {
    const session = await guardChange(http, request, reply);
    if (session === undefined) return reply;
    const reference = referenceOf(request);
    const state = formField(request, 'state') as InboxState;
    if (!STATES.includes(state)) return badForm(reply, session);
    if (!reference || !(await http.service.setState(reference, state))) return notFound(reply, request, session);
    return backTo(reply, reference, state);
  });

  app.post('/inbox/inquiries/:reference/verdict', async (request, reply) => {
    const session = await guardChange(http, request, reply);
    if (session === undefined) return reply;
    const reference = referenceOf(request);
    const verdict = formField(request, 'verdict');
    if (verdict !== 'spam' && verdict !== 'inbox') return badForm(reply, session);
    const outcome = reference ? await http.service.move(reference, verdict) : { kind: 'missing' as const };
    if (!reference || outcome.kind === 'missing') return notFound(reply, request, session);
    return backTo(reply, reference, outcome.kind === 'unchanged' ? 'unchanged' : verdict === 'spam' ? 'spam' : 'released');
  });

  app.post('/inbox/inquiries/:reference/requeue', async (request, reply) => {
    const session = await guardChange(http, request, reply);
    if (session === undefined) return reply;
    const reference = referenceOf(request);
    if (!reference || !(await http.service.find(reference))) return notFound(reply, request, session);
    return backTo(reply, reference, (await http.service.requeue(reference)) > 0 ? 'requeued' : 'nothing');
  });

  app.get('/inbox/inquiries/:reference/erase', async (request, reply) => {
    const session = await requireSession(http, request, reply);
    if (session === undefined) return reply;
    const reference = referenceOf(request);
    const full = reference && (await http.service.find(reference));
    if (!full) return notFound(reply, request, session);
    return sendHtml(reply, 200, erasePage(pageContext(http, session), full));
  });

  app.post('/inbox/inquiries/:reference/erase', async (request, reply) => {
    const session = await guardChange(http, request, reply);
    if (session === undefined) return reply;
    const reference = referenceOf(request);
    if (formField(request, 'confirm') !== 'yes') return badForm(reply, session);
    const outcome = reference && (await http.service.erase(reference));
    if (!outcome) return notFound(reply, request, session);
    const context = pageContext(http, session);
    const back = `<p><a href="${http.root}">All inquiries</a></p>`;
    if ('inFlight' in outcome) {
      return sendHtml(
        reply,
        409,
        messagePage(
          context,
          'Not erased yet',
          'A delivery of theirs is being sent right now, so nothing was erased. Try again in a minute.',
          back,
        ),
      );
    }
    const count = outcome.erased.inquiries.length;
    const text = `Everything held about ${outcome.email} is erased: ${count} ${count === 1 ? 'inquiry' : 'inquiries'}, ${outcome.erased.deliveries} deliveries, ${outcome.erased.agentRegistrations.length} agent registrations and ${outcome.erased.serviceMails} mails.`;
    return sendHtml(reply, 200, messagePage(context, 'Erased', text, back));
  });
}
