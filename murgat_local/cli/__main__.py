from murgat_local.cli import app

app(prog_name="murgat")
