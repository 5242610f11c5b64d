"""The name of the configuration file, apart so the options can name it without importing its reader."""

__all__ = ["CONFIG_NAME"]

CONFIG_NAME = "tiny-agent.toml"
