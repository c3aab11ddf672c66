/**
 * Each subcommand's own `--help`: its usage, what it does and examples (`switchboard --help`
 * lists them all). Keyed by the command word.
 */

/** `switchboard COMMAND --help` texts. */
export const COMMAND_HELP: Record<string, string> = {
  start: `Usage: switchboard start [--demo] [--config PATH] [--mcp-config PATH]

Runs every configured channel (Telegram, Slack) and the web chat until SIGTERM/SIGINT. With no
platform token and a terminal it also runs the console chat. Prints a one-time web chat login link.
--demo runs every chat on a small built-in scripted model (labelled [demo]; no model endpoint or
key needed): approvals and questions without an account.

Examples:
  OPENAI_API_KEY=sk-… switchboard start
  switchboard start --demo
  TELEGRAM_BOT_TOKEN=123:ABC switchboard start --config ./switchboard.toml
`,
  chat: `Usage: switchboard chat [--conversation NAME] [--jsonl] [--demo]

The terminal chat on the same core as the other channels: approvals, questions and buttons are
prompts. --jsonl speaks JSON lines on stdin/stdout instead (for scripts; the protocol is in
docs/commands.md, "JSONL protocol"). --demo answers from a small built-in scripted model (no model
endpoint or key needed), to see the chat work.

Examples:
  switchboard chat
  switchboard chat --demo
  switchboard chat --conversation work
  echo '{"type":"message","text":"hi"}' | switchboard chat --jsonl
`,
  migrate: `Usage: switchboard migrate [--config PATH]

Applies the pending database migrations and exits (start does this too).

Example:
  DATABASE_URL=postgres://switchboard@db/switchboard switchboard migrate
`,
  doctor: `Usage: switchboard doctor [--config PATH] [--mcp-config PATH]

Checks what start will need, changing nothing: the configuration, the database (the migrations it
would apply), the workspace, the HTTP port, the model endpoint and model, the shell sandbox, each
configured channel's token (Slack's Socket Mode too), MCP servers and ripgrep. Exit 0 when all pass (warnings
allowed), 1 when a check fails, 2 on a configuration fault.

Example:
  switchboard doctor --config ./switchboard.toml
`,
  pair: `Usage: switchboard pair list
       switchboard pair approve CODE

A stranger who messages the bot gets a pairing code; list the pending ones and let a user in.

Examples:
  switchboard pair list
  switchboard pair approve K7QM2X
`,
  jobs: `Usage: switchboard jobs list
       switchboard jobs add (--cron EXPR | --at TIME) [--tz ZONE] [--to CHANNEL:CHAT] [--name NAME] PROMPT
       switchboard jobs run|pause|resume|delete ID

Scheduled jobs: a prompt that runs as its own turn and reports to a chat. add validates like the
schedule_job tool; --cron takes 5 fields (or 6 with seconds first), --at an ISO 8601 time (read in
--tz, else jobs.timezone, else the machine's zone); without --to the report goes to the first
admin's home chat (/sethome). A running switchboard picks changes up at its next schedule re-read.

Examples:
  switchboard jobs add --cron "0 9 * * 1-5" --tz Europe/Berlin --to telegram:123456789 "Check the build and tell me"
  switchboard jobs add --at 2026-12-24T18:00 --name reminder --to slack:C0123ABCD "Remind me to call home"
  switchboard jobs list
  switchboard jobs pause k3m9x2ab
`,
  notify: `Usage: switchboard notify [--to CHANNEL:CHAT] [--title TITLE] TEXT|-

Sends a notification through the running switchboard (needs SWITCHBOARD_API_TOKEN); - reads the
text from stdin; without --to it goes to the admins' home chats.

Examples:
  switchboard notify --to telegram:123456789 "Backup done"
  df -h | switchboard notify --title "Disk usage" -
`,
  rules: `Usage: switchboard rules list
       switchboard rules revoke ID

Stored approval rules (e.g. an "always" grant): list them, delete one by its ID.

Examples:
  switchboard rules list
  switchboard rules revoke 3
`,
  mcp: `Usage: switchboard mcp list [--mcp-config PATH]

Connects to each configured MCP server once and prints its state and tools; exit 1 if one fails.

Example:
  switchboard mcp list --mcp-config ./mcp.json
`,
  healthcheck: `Usage: switchboard healthcheck [--config PATH]

Exits 0 when the switchboard running on this machine answers /healthz on its configured port (read
like start reads it: SWITCHBOARD_HTTP_PORT, else http.port in the config file, else 8080), else 1.
The Docker image's HEALTHCHECK runs it.

Example:
  switchboard healthcheck && echo healthy
`,
  web: `Usage: switchboard web link [--user NAME] [--admin] [--ttl MINUTES]
       switchboard web sessions
       switchboard web revoke ID|USER

The web chat's sign-in: a one-time login link (default user "operator", 15 minutes), the live
sessions, and ending one session or every session of a user.

Examples:
  switchboard web link --user ada --ttl 30
  switchboard web sessions
  switchboard web revoke ada
`,
};
