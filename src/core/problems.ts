/**
 * Failures the services catch and keep from clients (an engine's own text never reaches
 * an answer) but an operator must see. Services report here; the serving
 * process connects its logger once it has one.
 */
export type ProblemSink = (error: unknown, context: Record<string, unknown>) => void;

export class ProblemLog {
  private sink: ProblemSink = () => undefined;

  connect(sink: ProblemSink): void {
    this.sink = sink;
  }

  report(error: unknown, context: Record<string, unknown>): void {
    try {
      this.sink(error, context);
    } catch {
      // A failing logger must not turn a reported failure into another one.
    }
  }
}
