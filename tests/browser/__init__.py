"""End-to-end browser tests (JupyterLab + ipywidgets in headless Chromium)."""
