"""cron, systemd user timers, launchd: one tick every 15 minutes, maxmem decides the rest.

Every scheduler runs the same command, `maxmem daemon --once --if-due`, with absolute
paths and --db/--config; each job then decides from brain.db whether it is due (see
maxmem.jobs.due). So cron's ignored CRON_TZ, launchd's missing time zone key and a laptop
asleep at 03:00 no longer move retention off 03:00 New York time.

  cron     a marked block in the user crontab (`crontab -l` / `crontab -`) calling the
           maxmem-jobs-cron script, installed to $XDG_DATA_HOME/maxmem/bin (it reads
           ~/.config/maxmem/env, logs an exit line per tick)
  systemd  maxmem-jobs.service + maxmem-jobs.timer in ~/.config/systemd/user
           (OnCalendar=*:0/15, Persistent=true; EnvironmentFile= the env file)
  launchd  ~/Library/LaunchAgents/dev.maxmem.jobs.plist (StartCalendarInterval at
           :00/:15/:30/:45, RunAtLoad; a /bin/sh wrapper reads the env file)

Older versions also shipped one cron script per job (maxmem-capture-cron, …). `setup cron`
takes a crontab line running one of the jobs the tick runs out of the crontab (the tick
runs that job; both would run it twice), and names the replacement for the two the
tick does not run the same way (doctor's mailed report, the triggers sweep);
`old_script_lines` finds them, and doctor reports any left (`problems`).
"""

from __future__ import annotations

import os
import plistlib
import pwd
import re
import shlex
import subprocess
from pathlib import Path

from ..errors import InvalidInput
from ..jobs.table import TICK_MINUTES
from .files import CRONTAB, Change, Plan, package_data, read_bytes, read_crontab, which
from .install import Install, is_maxmem_command, split_command, strip_assignments

SCRIPT = "maxmem-jobs-cron"
BEGIN = "# >>> maxmem setup (remove with: maxmem setup cron --uninstall) >>>"
END = "# <<< maxmem setup <<<"
UNIT = "maxmem-jobs"
LABEL = "dev.maxmem.jobs"
HEADER = "# Written by maxmem setup {target}; remove with  maxmem setup {target} --uninstall\n"


# The per-job scripts older versions shipped: the tick's job each ran, or None when the
# tick does not do what it did (doctor-cron printed the report for cron to mail;
# triggers-cron swept conversation memories that capture did not write).
OLD_SCRIPTS: dict[str, str | None] = {
    "maxmem-capture-cron": "capture", "maxmem-embed-cron": "embed", "maxmem-retain-cron": "retention",
    "maxmem-sync-cron": "sync", "maxmem-backup-cron": "backup", "maxmem-doctor-cron": None,
    "maxmem-triggers-cron": None,
}


def tick_args(ctx: Install) -> list[str]:
    return ctx.argv("--log-file", str(ctx.log("jobs")), "daemon", "--once", "--if-due")


# -- what can run here ------------------------------------------------------------------------

SCHEDULERS = ("systemd", "cron", "launchd")


def user_bus_problem(ctx: Install) -> str | None:
    """Why `systemctl --user` cannot reach a user service manager here (None: it can).
    Without one (a container, a session with no systemd --user, root over ssh without
    lingering) the units would be written and never run."""
    systemctl = which("systemctl", ctx.env)
    if systemctl is None:
        return "no systemctl on PATH"
    if not ctx.env.get("XDG_RUNTIME_DIR"):
        return "no user systemd bus (XDG_RUNTIME_DIR is not set: no user service manager for this login)"
    try:
        done = subprocess.run([systemctl, "--user", "show-environment"], capture_output=True, text=True,
                              timeout=5, env=dict(ctx.env), stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"systemctl --user cannot run: {exc}"
    if done.returncode != 0:
        reason = (done.stderr or done.stdout).strip().splitlines()[:1]
        return f"no user systemd bus ({reason[0] if reason else f'systemctl --user exit {done.returncode}'})"
    return None


def activation_problem(target: str, ctx: Install) -> str | None:
    """Why setting up the scheduler `target` here would write files nothing runs (None:
    it can be activated, or `target` is not a scheduler)."""
    if target == "systemd":
        return user_bus_problem(ctx)
    if target == "cron" and which("crontab", ctx.env) is None:
        return "no crontab program on PATH (install cron, e.g.  apt install cron )"
    if target == "launchd" and ctx.platform != "darwin":
        return "launchd is macOS only"
    return None


def working_scheduler(ctx: Install, instead_of: str | None = None) -> str:
    """What starts the tick on this machine: the first scheduler that can be activated
    here, else the long-running daemon under a supervisor of the user's own."""
    order = ("launchd", "systemd", "cron") if ctx.platform == "darwin" else ("systemd", "cron")
    for name in order:
        if name != instead_of and activation_problem(name, ctx) is None:
            return f"maxmem setup {name}"
    daemon = shlex.join(ctx.argv("daemon")) if ctx.maxmem else "maxmem daemon"
    return (f"{daemon}  kept running by a supervisor of your own (your desktop's autostart, a tmux or "
            "screen window, your container's service manager): no systemd user bus or crontab here")


# -- cron -------------------------------------------------------------------------------------

def script_path(ctx: Install) -> Path:
    return ctx.data_dir() / "bin" / SCRIPT


def one_line(word: str) -> str:
    """`word` (a path, an option) for a scheduler's line: one holding a line break would
    end the line there and start one of its own, a command cron or systemd runs."""
    if "\n" in word or "\r" in word:
        raise InvalidInput(f"{word!r} holds a line break, which a scheduler's line cannot carry: "
                           "give a path without one")
    return word


def cron_line(ctx: Install) -> str:
    if len(ctx.maxmem) == 1:
        words = [f"MAXMEM_BIN={shlex.quote(one_line(ctx.executable))}",
                 f"MAXMEM_LOG_DIR={shlex.quote(one_line(str(ctx.state)))}",
                 shlex.quote(one_line(str(script_path(ctx)))), *(shlex.quote(one_line(w)) for w in ctx.globals())]
    else:  # `python -m maxmem` (no entry point): the command itself, its output into the log
        words = [shlex.join(map(one_line, tick_args(ctx))), ">>", shlex.quote(one_line(str(ctx.log("jobs")))), "2>&1"]
    command = " ".join(words).replace("%", "\\%")  # cron turns a bare % into a newline
    return f"*/{TICK_MINUTES} * * * * {command}"


def block(ctx: Install) -> str:
    log = one_line(str(ctx.log("jobs")))
    return (f"{BEGIN}\n# every {TICK_MINUTES} min: the maxmem jobs that are due (log: {log})\n"
            f"{cron_line(ctx)}\n{END}\n")


def without_block(text: str) -> str:
    return re.sub(rf"(?ms)^{re.escape(BEGIN)}\n.*?^{re.escape(END)}\n?", "", text)


def old_script(line: str) -> str | None:
    """The per-job script (an OLD_SCRIPTS name) a crontab line runs, if it runs one."""
    fields = line.split(None, 5)
    if line.lstrip().startswith("#") or len(fields) < 6:
        return None
    rest = strip_assignments(split_command(fields[5].replace("\\%", "%")))
    name = Path(rest[0]).name if rest else ""
    return name if name in OLD_SCRIPTS else None


def replacement(ctx: Install, script: str) -> str:
    """The crontab line that does what an old script the tick does not cover did."""
    maxmem = shlex.join(ctx.argv())
    if script == "maxmem-doctor-cron":  # silent while all is well; the report, for cron to mail
        return f'15 * * * * out=$({maxmem} doctor 2>&1) || echo "$out"'
    return f"30 */2 * * * {maxmem} --log-file {shlex.quote(str(ctx.log('triggers')))} triggers sweep --since 3h"


def migrated(ctx: Install, text: str) -> tuple[str, list[str]]:
    """The crontab without the lines running an old per-job script the tick replaces, and
    a note for each old line, removed or kept."""
    kept, notes = [], []
    for line in text.splitlines(keepends=True):
        script = old_script(line)
        if script is not None and OLD_SCRIPTS[script] is not None:
            notes.append(f"removed the old line  {line.strip()}  : the tick runs {OLD_SCRIPTS[script]}")
            continue
        if script is not None:
            notes.append(f"the crontab runs  {script}  , which maxmem no longer ships: replace that line "
                         f"with  {replacement(ctx, script)}")
        kept.append(line)
    return "".join(kept), notes


def cron_plan(ctx: Install) -> Plan:
    result = Plan("cron")
    crontab = which("crontab", ctx.env)
    current = read_crontab(crontab)
    if current is None:
        result.notes.append("no crontab program on PATH: install cron (apt install cron), or add the "
                            "block below by hand with  crontab -e")
        current = b""
    text, migration = migrated(ctx, current.decode("utf-8", "replace"))
    result.notes += migration
    wanted = block(ctx)
    if BEGIN in text:
        new = re.sub(rf"(?ms)^{re.escape(BEGIN)}\n.*?^{re.escape(END)}\n?", lambda _: wanted, text, count=1)
    else:
        new = text + ("" if not text or text.endswith("\n") else "\n") + wanted
    result.add(Change(script_path(ctx), read_bytes(script_path(ctx)), package_data("scripts", SCRIPT), 0o755))
    result.add(Change(CRONTAB, current, new.encode("utf-8"), crontab=True))
    for line in without_block(text).splitlines():
        if line.strip() and not line.lstrip().startswith("#") and "maxmem" in line and not old_script(line):
            result.notes.append(f"the crontab also has  {line.strip()}  : it runs too (two schedulers "
                                "running the same jobs); remove it if this block replaces it")
    if ctx.platform == "darwin":
        result.notes.append("cron is off by default on macOS: prefer  maxmem setup launchd")
    return result


def cron_unplan(ctx: Install) -> Plan:
    result = Plan("cron")
    current = read_crontab(which("crontab", ctx.env))
    if current is not None and BEGIN.encode() in current:
        result.add(Change(CRONTAB, current, without_block(current.decode("utf-8", "replace")).encode("utf-8"),
                          crontab=True))
    if script_path(ctx).exists():
        result.add(Change(script_path(ctx), read_bytes(script_path(ctx)), None))
    return result


def cron_commands(ctx: Install) -> list[list[str]]:
    current = read_crontab(which("crontab", ctx.env)) or b""
    out = []
    for line in current.decode("utf-8", "replace").splitlines():
        fields = line.split(None, 5)
        if line.startswith("#") or len(fields) < 6:
            continue
        argv = split_command(fields[5].replace("\\%", "%"))
        assignments = dict(w.split("=", 1) for w in argv[: len(argv) - len(strip_assignments(argv))])
        rest = strip_assignments(argv)
        if rest and Path(rest[0]).name.startswith("maxmem-") and rest[0].endswith("-cron"):
            out.append([assignments.get("MAXMEM_BIN", "maxmem"), *rest])
        elif is_maxmem_command(rest):
            out.append(rest)
    return out


# -- systemd user timers ----------------------------------------------------------------------

def unit_dir(ctx: Install) -> Path:
    base = ctx.env.get("XDG_CONFIG_HOME") or str(ctx.home / ".config")
    return Path(base) / "systemd" / "user"


def _systemd_quote(word: str) -> str:
    word = one_line(word).replace("%", "%%").replace("$", "$$")
    if re.search(r'[\s"\'\\;]', word):
        return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return word


def service_text(ctx: Install) -> str:
    exec_start = " ".join(_systemd_quote(w) for w in tick_args(ctx))
    return (HEADER.format(target="systemd")
            + "[Unit]\nDescription=maxmem: the jobs that are due (capture, retention, backup, sync, embed, doctor)\n\n"
            + "[Service]\nType=oneshot\n"
            + f"EnvironmentFile=-{_systemd_quote(str(ctx.env_file))}\n"
            + f"Environment={_systemd_quote('MAXMEM_LOG_DIR=' + str(ctx.state))}\n"
            + f"ExecStart={exec_start}\n")


def timer_text() -> str:
    return (HEADER.format(target="systemd")
            + f"[Unit]\nDescription=maxmem: a tick every {TICK_MINUTES} minutes "
            "(each job decides whether it is due)\n\n"
            + f"[Timer]\nOnCalendar=*:0/{TICK_MINUTES}\nPersistent=true\nAccuracySec=1min\n\n"
            + "[Install]\nWantedBy=timers.target\n")


def login_name() -> str:
    """The user's login name from the password database (cron and env -i set no USER)."""
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return str(os.getuid())


def systemd_plan(ctx: Install) -> Plan:
    result = Plan("systemd")
    for name, text in ((f"{UNIT}.service", service_text(ctx)), (f"{UNIT}.timer", timer_text())):
        path = unit_dir(ctx) / name
        result.add(Change(path, read_bytes(path), text.encode("utf-8"), 0o644))
    result.after_commands += [["systemctl", "--user", "daemon-reload"],
                              ["systemctl", "--user", "enable", "--now", f"{UNIT}.timer"]]
    user = ctx.env.get("USER") or ctx.env.get("LOGNAME") or login_name()
    if not Path("/var/lib/systemd/linger", user).exists():
        result.steps.append(f"So the timer also runs while you are logged out:  loginctl enable-linger {user}  "
                            "(needs your password or root)")
    if ctx.platform == "darwin":
        result.notes.append("systemd is Linux only: on macOS use  maxmem setup launchd")
    return result


def systemd_unplan(ctx: Install) -> Plan:
    result = Plan("systemd")
    for name in (f"{UNIT}.timer", f"{UNIT}.service"):
        path = unit_dir(ctx) / name
        if path.exists():
            result.add(Change(path, read_bytes(path), None))
    if result.changes:
        result.before_commands.append(["systemctl", "--user", "disable", "--now", f"{UNIT}.timer"])
        result.after_commands.append(["systemctl", "--user", "daemon-reload"])
    return result


def systemd_commands(ctx: Install) -> list[list[str]]:
    data = read_bytes(unit_dir(ctx) / f"{UNIT}.service")
    if not data:
        return []
    for line in data.decode("utf-8", "replace").splitlines():
        if line.startswith("ExecStart="):
            return [split_command(line[len("ExecStart="):].replace("%%", "%").replace("$$", "$"))]
    return []


# -- launchd ---------------------------------------------------------------------------------

def plist_path(ctx: Install) -> Path:
    return ctx.home / "Library" / "LaunchAgents" / f"{LABEL}.plist"


# launchd has no EnvironmentFile: a shell reads the env file (secrets stay out of the plist).
WRAPPER = '[ -r "$1" ] && { set -a; . "$1"; set +a; }; shift; exec "$@"'


_XML_UNFIT = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


def plist_bytes(ctx: Install) -> bytes:
    arguments = ["/bin/sh", "-c", WRAPPER, "maxmem-jobs", str(ctx.env_file), *tick_args(ctx)]
    for word in [*arguments, str(ctx.state)]:  # XML holds no C0 control but tab and line breaks
        if _XML_UNFIT.search(word):
            raise InvalidInput(f"{word!r} holds a control character, which a launchd plist cannot "
                               "carry: give a path without one")
    data = {
        "Label": LABEL,
        "ProgramArguments": arguments,
        "EnvironmentVariables": {"MAXMEM_LOG_DIR": str(ctx.state)},
        # No time zone key in launchd: a tick every 15 minutes, coalesced into one after sleep.
        "StartCalendarInterval": [{"Minute": m} for m in range(0, 60, TICK_MINUTES)],
        "RunAtLoad": True,
        "ProcessType": "Background",
        "StandardOutPath": str(ctx.state / "jobs.out"),
        "StandardErrorPath": str(ctx.state / "jobs.out"),
    }
    return plistlib.dumps(data, sort_keys=False)


def launchd_plan(ctx: Install) -> Plan:
    result = Plan("launchd")
    path = plist_path(ctx)
    before = read_bytes(path)
    result.add(Change(path, before, plist_bytes(ctx), 0o644))
    uid = os.getuid()
    if before is not None:
        result.after_commands.append(["launchctl", "bootout", f"gui/{uid}/{LABEL}"])
    result.after_commands.append(["launchctl", "bootstrap", f"gui/{uid}", str(path)])
    if ctx.platform != "darwin":
        result.notes.append("launchd is macOS only: on Linux use  maxmem setup systemd  or  cron")
    return result


def launchd_unplan(ctx: Install) -> Plan:
    result = Plan("launchd")
    path = plist_path(ctx)
    if path.exists():
        uid = os.getuid()
        result.add(Change(path, read_bytes(path), None))
        result.before_commands.append(["launchctl", "bootout", f"gui/{uid}/{LABEL}"])
    return result


def launchd_commands(ctx: Install) -> list[list[str]]:
    data = read_bytes(plist_path(ctx))
    if not data:
        return []
    try:
        args = plistlib.loads(data).get("ProgramArguments", [])
    except (plistlib.InvalidFileException, ValueError, TypeError, AttributeError):  # damaged: nothing to check
        return []
    return [list(args[5:])] if len(args) > 5 and args[0] == "/bin/sh" else [list(args)]
