package main

// runLong is labmate run --help.
const runLong = `Solve a scientific or engineering task with the dual-loop agent. It plans the task (steps
with validation checkpoints), writes code and runs it in a live, sandboxed kernel while perception
watches the run and interrupts it when it goes wrong, repairs failed or interrupted runs (up to
--max-repairs per step), reviews each step against its checkpoint and re-plans when the plan was
wrong (up to --max-replans), and answers with the evidence. The TASK is a sentence, in quotes: a
one-word argument within two edits of a command of labmate run (list, show), or a prefix of one
(labmate run lst), is refused as a typo of that command.

The model is --model SPEC (else $LABMATE_MODEL, else the config file; see labmate model), such as
openai:gpt-4.1, anthropic:claude-sonnet-4-5 or ollama:qwen3:8b. --mode direct answers with one model call and no tools; --mode codeact runs one
conversation with run_code, without plan, perception or reflection (baselines for comparisons).

Progress is printed to stderr as it happens and the answer to stdout; --json prints every event as
NDJSON to stdout instead (run_start, memory, plan, model_call, operation, verdict, tool_result,
reflection, answer, stop). --stats adds a table of tokens and calls per module, hot-fixes, repairs
and re-plans.

In agent mode, memory (--memory-store, default ~/.local/share/labmate/memory.db; see labmate
memory) is recalled before planning and before each step: the guardrails (what failed before and
what fixed it), references (values to consult, never to report as the result), facts and skills
relevant to the task. Before a cell runs, a cell that repeats a setting a guardrail records as
failing is sent back to the model once with what worked then. What each step's execution taught
is written back through consolidation, linked to the run and its operations: a failure followed
by a repair that worked becomes a guardrail, an accepted step a skill created or revised by
content (never overwritten by title), the counts of the skills it used move, and values it
compared against are kept as references. The model also gets the tools search_memory,
search_skills, save_fact, save_skill and update_skill. --memory-read NS adds namespaces to recall
(e.g. a frozen memory another model wrote), --memory-infer lets the model decide ADD, UPDATE,
DELETE or NOOP when consolidating, and --no-memory turns memory off.

Every event goes into the data directory's log, DATA/labmate.db, which labmate serve and its
dashboard show live (the run appends to it itself, beside a running server), and the run's
state is checkpointed there too, in the run's stream (labmate run list, labmate run show ID; a
DATA/runs.db of an earlier labmate is imported once and kept as runs.db.imported): a run that
was killed, stopped with Ctrl-C or stopped by its provider failing (down, overloaded, rate
limited) continues with --resume ID, with the model it worked with unless --model names another,
without repeating the operations it finished. The kernels are new: the variables they can
serialise (Python's picklable globals, Octave's save-able variables), saved after each operation
in the workspace's .labmate/state, are loaded back, the model is told which names could not be,
and files in the workspace remain.

The code the model writes runs in a workspace of its own, DATA/workspaces/run-ID (printed when the
run starts), the only place it can write; --workspace DIR lets it work in a directory of yours
instead (its .git and other dot-directories stay read-only to the code).

In agent mode the model also has the job tools (submit_job, job_status, job_logs, cancel_job,
list_jobs; see labmate job), its jobs confined to the run's workspace, and wait_job: a run that
needs a job's result parks instead of polling. It stops, checkpointed, naming the job, and labmate
run exits with status 4 saying so; labmate run --resume ID waits for the job to end (Ctrl-C leaves
the run parked) and continues the run with the job's outcome. --wait-jobs waits in this process
instead. A queued local job starts only while a labmate process holds the job directory open
(labmate job wait, serve, mcp, or the waiting run). Runs of labmate serve that park are resumed
by the server when their job ends.

Caps: --max-turns model calls, --budget tokens, --timeout wall time. A run that hits one stops
cleanly with what it had established. Exit status: 0 answered, 3 stopped by a cap (partial
result), 4 parked on a job, 1 failed (the provider or labmate), 130 interrupted, 2 could not start.`
