"""Builds the optional C accelerator for verification; without a compiler the pure-Python path is used."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("ledger._fastscan", ["ledger/_fastscan.c"], libraries=["crypto", "z"], optional=True)])
