// CPU mode: the definitions live in flashcuda_cpu.h
#pragma once
