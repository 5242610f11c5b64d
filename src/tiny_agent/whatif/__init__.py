"""What would another policy have cost? Replays of a stored session's log that send nothing.

- ``bodies``: a recorded session (``tiny-agent record``) replayed: the program's bodies re-priced.
- ``figures``: the two sides of a replay, recorded and replayed: every call's figures and the totals.
- ``provider``: the provider a replay talks to: the recorded answers, billed by the profile's cache rules.
- ``recorded``: what a recording holds, indexed for its replay: answers, summaries, bills, output cap.
- ``replay``: ``replay``, ``sweep`` and ``Policy``: a stored session run again under another policy.
- ``replies``: what a replay answers a summary call with: a recorded answer, or a stand-in's thinking.
- ``thinking``: the thinking settings a replay or an export renders with: the session's own.
"""
