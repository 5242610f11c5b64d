"""tiny-agent: an agent runtime whose heart is a context engine."""
