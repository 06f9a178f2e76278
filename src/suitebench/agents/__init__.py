"""Agents: the agent harness (the model client it shares with other modes is :mod:`suitebench.llm`).

* :mod:`suitebench.agents.harness` -- ``suitebench agent run``: a workspace per task
  (:mod:`~suitebench.agents.workspace`, :mod:`~suitebench.agents.briefs`), the agent run
  contained (:mod:`~suitebench.agents.contain`, :mod:`~suitebench.agents.gateway`), its output
  scored (:mod:`~suitebench.agents.scoring`);
* :mod:`suitebench.agents.presets` -- how mini-swe-agent, Claude Code, Codex CLI and OpenCode
  are started; :mod:`suitebench.agents.trajectory` -- reading their transcripts;
* :mod:`suitebench.agents.fakeserver` -- a scripted OpenAI-compatible server for tests;
* :mod:`suitebench.agents.batch` -- many runs, in parallel, resumable.
"""
