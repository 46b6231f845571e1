pytest_plugins = ["zkr.testing"]
