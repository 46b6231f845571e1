"""Plugins that ship with zkr-core (registered by :func:`zkr.plugins.load_plugins`)."""
