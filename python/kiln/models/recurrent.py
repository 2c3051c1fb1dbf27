"""Recurrent classifiers: a GRU keyword spotter and an LSTM activity recogniser.

Why in the zoo: ``nn.GRU``/``nn.LSTM`` are what users reach for on audio and sensor
sequences; torch.export unrolls them over time into linear layers, ``split_with_sizes``
(the gates), sigmoid, tanh and elementwise arithmetic.

* GRU: 49 frames x 10 MFCC coefficients (the keyword-spotting input of DS-CNN),
  one GRU layer of 64 units, the last step's state to 12 classes.
* LSTM: 32 steps x 6 channels of inertial data (3-axis accelerometer and gyroscope,
  about 0.6 s at 50 Hz), one LSTM layer of 32 units, the last step to 6 activities.
"""

from __future__ import annotations

import torch
from torch import nn

from kiln.models.calibration import example_input


class RecurrentClassifier(nn.Module):
    def __init__(self, cell: type[nn.RNNBase], features: int, hidden: int, classes: int) -> None:
        super().__init__()
        self.rnn = cell(features, hidden, batch_first=True)
        self.classifier = nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        sequence, _ = self.rnn(x)
        return self.classifier(sequence[:, -1])


def make_gru_kws() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    return RecurrentClassifier(nn.GRU, 10, 64, 12), (example_input((1, 49, 10)),)


def make_lstm_har() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    return RecurrentClassifier(nn.LSTM, 6, 32, 6), (example_input((1, 32, 6)),)
