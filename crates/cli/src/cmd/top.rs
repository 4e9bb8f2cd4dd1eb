//! `leakscope top`: the live allocation view of a JVM running the agent (Modula-3's Shownew).

use std::io::{IsTerminal, Write};
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use render::TextWith;

use crate::exit::Exit;

/// Watch a JVM that runs the leakscope agent: estimated live and allocated bytes per class,
/// and the classes that keep growing, refreshed until the JVM ends.
///
/// TARGET is a process id (the agent must be loaded: `leakscope run` or `leakscope attach`)
/// or a run store. The numbers are estimates from sampled allocations, with their 95 %
/// sampling error: a class allocated rarely and kept may show nothing until one of its objects
/// is sampled. Live volumes come from the newest snapshot taken right after a heap walk or a
/// collection, since between collections the samples also count garbage. On a terminal,
/// q (or Esc, or Ctrl-C) quits.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  leakscope top 12345
  leakscope top run.db --once
  # one refresh as JSON
  leakscope top 12345 --json")]
pub struct TopArgs {
    /// Process id of a JVM with the agent, or a run store (RUN.db).
    pub target: String,
    /// Classes shown (0 means all).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub top: usize,
    /// Time between refreshes (2s, 500ms).
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_every)]
    pub every: Duration,
    /// Print one refresh and exit.
    #[arg(long)]
    pub once: bool,
    /// Print one refresh as JSON and exit: {"source","pid","gc_count","live_bytes","live_error_bytes","live_source","walks","walked_bytes","classes":[{"name","live_bytes","live_error_bytes","live_instances","allocated_bytes","allocated_bytes_per_s"}],"candidates":[{"class","rank","growth_bytes","held_by"}],…}.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command.
pub fn run(args: &TopArgs) -> anyhow::Result<Exit> {
    let path = app::jvm::store_of(&args.target)?;
    let every = args.every;
    if std::io::stdout().is_terminal() && std::io::stdin().is_terminal() && !args.once && !args.json {
        return interactive(&path, args, every);
    }
    loop {
        let v = app::live::top_view(&path)?;
        if args.json {
            return crate::dump_args::emit(true, &v, None, |_| String::new());
        }
        let mut out = std::io::stdout().lock();
        write!(out, "{}", v.to_text(crate::dump_args::top_n(args.top)))?;
        out.flush()?;
        if args.once || v.status != "running" {
            return Ok(Exit::Success);
        }
        std::thread::sleep(every.max(Duration::from_millis(100)));
    }
}

/// Refreshes on the terminal's alternate screen until the JVM ends or a key says quit; a
/// resize redraws at once. The last view stays on the normal screen afterwards.
fn interactive(path: &std::path::Path, args: &TopArgs, every: Duration) -> anyhow::Result<Exit> {
    use crossterm::{cursor, execute, terminal};
    let mut out = std::io::stdout();
    terminal::enable_raw_mode().context("cannot read keys from the terminal")?;
    let _ = execute!(out, terminal::EnterAlternateScreen, cursor::Hide);
    let mut last = None;
    let result = refresh_until_quit(path, args, every, &mut last);
    let _ = execute!(out, cursor::Show, terminal::LeaveAlternateScreen);
    let _ = terminal::disable_raw_mode();
    if let Some(text) = last {
        print!("{text}");
    }
    result
}

fn refresh_until_quit(
    path: &std::path::Path,
    args: &TopArgs,
    every: Duration,
    last: &mut Option<String>,
) -> anyhow::Result<Exit> {
    use crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
    use crossterm::{cursor, queue, terminal};
    loop {
        let v = app::live::top_view(path)?;
        let (width, height) = terminal::size().unwrap_or((80, 24));
        let text = v.to_text(crate::dump_args::top_n(args.top));
        let mut out = std::io::stdout().lock();
        queue!(out, cursor::MoveTo(0, 0), terminal::Clear(terminal::ClearType::All))?;
        // Raw mode: lines end in \r\n, and each is cut to the width so that none wraps onto
        // the next (a wrapped line drew twice after a resize).
        for line in text.lines().take(usize::from(height.saturating_sub(1)).max(1)) {
            let cut: String = line.chars().take(usize::from(width)).collect();
            write!(out, "{cut}\r\n")?;
        }
        out.flush()?;
        *last = Some(text);
        if v.status != "running" {
            return Ok(Exit::Success);
        }
        let deadline = std::time::Instant::now() + every.max(Duration::from_millis(100));
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() || !event::poll(left)? {
                break;
            }
            match event::read()? {
                Event::Key(k) if k.kind == KeyEventKind::Press => {
                    let ctrl_c = k.code == KeyCode::Char('c') && k.modifiers.contains(KeyModifiers::CONTROL);
                    if ctrl_c || matches!(k.code, KeyCode::Char('q') | KeyCode::Esc) {
                        return Ok(Exit::Success);
                    }
                }
                Event::Resize(..) => break,
                _ => {}
            }
        }
    }
}

/// A refresh period above zero, such as `2s` or `500ms`.
fn parse_every(s: &str) -> Result<Duration, String> {
    let every = crate::dump_args::parse_duration(s)?;
    if every.is_zero() {
        Err(format!("`{s}` is no time between refreshes"))
    } else {
        Ok(every)
    }
}
