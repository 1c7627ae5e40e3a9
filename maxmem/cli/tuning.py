"""`maxmem tune`: the brain measures its own recall on questions read from it, tunes the
search settings on half of them, keeps a change only when the other half confirms it,
and with --apply writes it to config.toml (--revert takes it back)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..brain import Brain
from ..config import default_config_path
from ..errors import MaxmemError
from ..tune import SEED, Question, benchmark, model_questions, report_lines, revert_settings, tune, write_settings
from .common import State, emit, json_option, pass_state


@click.command("tune")
@click.option("--apply", "apply_", is_flag=True,
              help="Write the settings tune kept to config.toml (comments kept; the old values are saved).")
@click.option("--revert", is_flag=True, help="Put back the values the last --apply replaced, and stop.")
@click.option("--ask-model", metavar="MODEL",
              help="Also ask this chat model of your OpenAI-compatible endpoint (openai_base_url) for "
                   "questions about sampled memories: their text is sent to it. Off unless given.")
@click.option("--model-questions", "model_questions_", type=click.IntRange(1, 500), default=50, show_default=True,
              help="How many questions --ask-model asks for.")
@click.option("--seed", type=int, default=SEED, show_default=True,
              help="Seed of the tuning / held-out split.")
@json_option
@pass_state
def tune_(state: State, apply_: bool, revert: bool, ask_model: str | None, model_questions_: int,
          seed: int, as_json: bool) -> None:
    """Tune search on your own brain's recall.

    Reads questions and the memories that answered them from this brain (questions you
    asked in captured conversations and the answers' memories, turns that ask and their
    replies, your searches and the memories you fetched with  get  after them), tunes
    vector_weight / keyword_weight, the candidate pool ([search] candidates), recency
    ([search] recency_weight, recency_half_life) and a lower min_relevance on half, and
    keeps the change only if it beats the current settings on the other half by more than
    the noise. Prints R@1, R@5, R@10, MRR and the nothing-found rate before and after,
    and a few questions still missed. Nothing is written without --apply.
    """
    config_path = Path(state.config.config_path or default_config_path({}))
    if revert:
        emit(revert_settings(config_path), as_json,
             lambda d: [f"{config_path}: " + ", ".join(
                 f"{k} = {v}" if v is not None else f"{k} unset" for k, v in d["restored"].items())])
        return
    brain = state.brain(create=False)
    extra = []
    if ask_model:
        extra = _asked(state, brain, ask_model, model_questions_, seed)
    progress = None if as_json else (lambda text: click.echo(f"tune: {text}", err=True))
    result = tune(brain, benchmark(brain, extra, seed=seed), seed=seed, progress=progress)
    data: dict[str, Any] = result.to_dict()
    if apply_ and result.changed:
        data["applied"] = write_settings(config_path, result.after, result.before)
    emit(data, as_json, lambda d: report_lines(result, applied="applied" in d))


def _asked(state: State, brain: Brain, model: str, count: int, seed: int) -> list[Question]:
    """The questions `model` writes, or one line saying why the endpoint could not be asked
    (nothing is tuned then)."""
    import openai  # heavy: only when a model is asked

    try:
        return model_questions(brain, _client(state), model, count, seed)
    except openai.OpenAIError as exc:
        where = state.config.openai_base_url or "the OpenAI API"
        raise MaxmemError(f"could not ask {model} at {where} ({type(exc).__name__}: {exc}); "
                          f"nothing was tuned") from exc


def _client(state: State) -> Any:
    import openai  # heavy: only when a model is asked

    config = state.config
    return openai.OpenAI(base_url=config.openai_base_url, api_key=config.openai_api_key or "none",
                         timeout=config.embed_timeout, max_retries=1)


COMMANDS = [tune_]
