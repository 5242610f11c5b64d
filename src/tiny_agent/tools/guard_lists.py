"""The paths the guards refuse by default, each with the reason a refusal gives: what ``write_file`` protects
(hooks, VCS folders, config that runs programs) and what ``read_file`` treats as a secret."""

from __future__ import annotations

__all__ = ["DEFAULT_PROTECT", "SECRETS", "SECRET_TEMPLATES"]


DEFAULT_PROTECT: tuple[tuple[str, str], ...] = (
    (
        ".git",
        "git runs the hooks kept here and the programs its config names (core.fsmonitor, core.hooksPath, "
        "aliases); refs and objects are the history; git diff shows none of it",
    ),
    (".hg", "Mercurial runs the [hooks] of .hg/hgrc and keeps the history here"),
    (".svn", "Subversion's working-copy database and pristine copies, which svn diff and commit trust"),
    (".bzr", "Bazaar's branch, history and hooks"),
    (".jj", "Jujutsu's repository, operation log and config"),
    (".husky", "husky's git hooks run on the next commit or push"),
    (".githooks", "the usual core.hooksPath folder: its hooks run on the next commit or push"),
    (".pre-commit-config.yaml", "pre-commit runs the commands it lists on the next commit"),
    ("lefthook.*", "lefthook runs the commands it lists on the next commit or push"),
    ("lefthook-local.*", "lefthook runs the commands it lists on the next commit or push"),
    (".lefthook.*", "lefthook runs the commands it lists on the next commit or push"),
    (".lefthook-local.*", "lefthook runs the commands it lists on the next commit or push"),
    (".envrc", "direnv runs it in the user's shell on cd into the folder"),
    ("**/.vscode/tasks.json", "VS Code can run its tasks when the folder is opened"),
    ("**/.vscode/settings.json", "VS Code and its extensions run the programs its settings name"),
    (".npmrc", "npm reads it on every command: node-options or script-shell there run any program"),
    (".yarnrc", "yarn reads it on every command: yarn-path there runs any program"),
    (".yarnrc.yml", "yarn reads it on every command: yarnPath there runs any program"),
    ("tiny-agent.toml", "tiny-agent starts the MCP servers and runs the hooks it lists on its next run"),
)
"""(glob, why) for each path ``write_file`` refuses unless ``default_protect=False``. Names without
a "/" match at any depth (a nested repository's ``.git`` too, or the ``.git`` file of a worktree,
whose ``gitdir:`` line could point git at planted hooks)."""


_PRIVATE_KEY = "looks like a private key or certificate store"


_CLOUD = "holds cloud or registry credentials"


SECRETS: tuple[tuple[str, str], ...] = (
    (".env", "environment files hold API keys and passwords"),
    (".env.*", "environment files hold API keys and passwords"),
    ("*.env", "environment files hold API keys and passwords"),
    (".envrc", "direnv files usually export tokens"),
    ("id_rsa", _PRIVATE_KEY),
    ("id_dsa", _PRIVATE_KEY),
    ("id_ecdsa", _PRIVATE_KEY),
    ("id_ed25519", _PRIVATE_KEY),
    ("id_ecdsa_sk", _PRIVATE_KEY),
    ("id_ed25519_sk", _PRIVATE_KEY),
    ("*.pem", _PRIVATE_KEY),
    ("*.key", _PRIVATE_KEY),
    ("*.p12", _PRIVATE_KEY),
    ("*.pfx", _PRIVATE_KEY),
    ("*.jks", _PRIVATE_KEY),
    ("*.keystore", _PRIVATE_KEY),
    ("*.ppk", _PRIVATE_KEY),
    (".ssh", "SSH keys and their config"),
    (".gnupg", "GnuPG private keys"),
    ("**/.aws/credentials", _CLOUD),
    ("**/.config/gcloud", _CLOUD),
    ("application_default_credentials.json", _CLOUD),
    ("**/.azure", _CLOUD),
    ("**/.kube/config", "holds Kubernetes cluster credentials"),
    ("kubeconfig", "holds Kubernetes cluster credentials"),
    ("**/.docker/config.json", _CLOUD),
    ("**/.config/gh/hosts.yml", "holds the GitHub CLI's token"),
    ("**/.cargo/credentials", _CLOUD),
    ("**/.cargo/credentials.toml", _CLOUD),
    ("**/.gem/credentials", _CLOUD),
    ("**/.terraform.d/credentials.tfrc.json", _CLOUD),
    (".terraformrc", _CLOUD),
    ("*.tfstate", "Terraform state keeps secrets in plain text"),
    ("*.tfstate.backup", "Terraform state keeps secrets in plain text"),
    (".netrc", "holds login passwords for hosts"),
    ("_netrc", "holds login passwords for hosts"),
    (".git-credentials", "holds git passwords and tokens"),
    (".pypirc", "holds package index passwords"),
    (".npmrc", "can hold a registry token"),
    (".yarnrc.yml", "can hold a registry token"),
    (".vault-token", "holds a Vault token"),
    (".pgpass", "holds database passwords"),
    (".my.cnf", "holds database passwords"),
    (".htpasswd", "holds password hashes"),
    ("**/.streamlit/secrets.toml", "holds app secrets"),
)
"""(glob, why) for each path ``read_file`` refuses unless ``allow_read=`` names it."""


SECRET_TEMPLATES = (".env.example", ".env.sample", ".env.template", ".env.dist")
"""Exceptions to ``.env.*``: committed templates, meant to be read."""
