"""The embedded model's guidance: what a small model may reply, read from the request's phrasing.

- ``file_terms``: what each file on offer holds, as counted word stems (for BM25 over file heads).
- ``json_guide``: the JSON grammar of the replies a small model may give this turn.
- ``options``: ``GuideOptions``: which of the guide's narrowings are on, and the limits they default to.
- ``path_rank``: which paths a request is about: by name first, then by the words the files hold.
- ``quotes``: what the embedded model may answer: a quote of what its tools returned for this request.
- ``request_kind``: what a request asks of the workspace, from its phrasing (small talk, "show me X", ...).
- ``tool_request``: whether a request spells out a search, an edit or a shell command, and that one call.
- ``words``: the words of a request and of the workspace, compared as a person reads them (stems, typos).
- ``write_request``: whether a request asks for a file to be written, which file, and what it should say.
"""
