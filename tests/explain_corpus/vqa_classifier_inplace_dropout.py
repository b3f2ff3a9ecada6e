"""Bottom-up-attention VQA SimpleClassifier: nn.ReLU() followed by nn.Dropout(dropout, inplace=True) inside nn.Sequential.

Source: https://github.com/BierOne/bottom-up-attention-vqa/issues/6
Thread: Training failed with "one of the variables needed for gradient computation has been modified by an inplace operation: [torch.cuda.FloatTensor [512, 2048]], which is output 0 of ReluBackward0, is at version 1". The answer in the thread: in model/classifier.py, nn.Dropout(dropout, inplace=True) must be changed to nn.Dropout(dropout, inplace=False). The in-place dropout overwrites the ReLU output that ReLU saved for its backward.
Cause: IN_PLACE_IN_FORWARD
Fix: Construct the classifier's dropout with inplace=False (nn.Dropout(dropout, inplace=False)).
Fix mentions: inplace=False, Dropout
Fix must not say: retain_graph=True
"""
import torch
import torch.nn as nn


class FCNet(nn.Module):
    def __init__(self, dims):
        super(FCNet, self).__init__()
        self.main = nn.Sequential(nn.Linear(dims[0], dims[1]), nn.ReLU())

    def forward(self, x):
        return self.main(x)


class SimpleClassifier(nn.Module):
    def __init__(self, in_dim, hid_dim, out_dim, dropout=0.0):
        super(SimpleClassifier, self).__init__()
        self.q_net = FCNet([in_dim[0], hid_dim[0]])
        self.v_net = FCNet([in_dim[1], hid_dim[0]])
        self.main = nn.Sequential(
            nn.Linear(hid_dim[0], hid_dim[1]),
            nn.ReLU(),
            nn.Dropout(dropout, inplace=True),
            nn.Linear(hid_dim[1], out_dim)
        )

    def forward(self, q_emb, v_emb):
        joint_repr = self.q_net(q_emb) * self.v_net(v_emb)
        logits = self.main(joint_repr)  # made changed
        return logits


def main():
    torch.manual_seed(0)
    classifier = SimpleClassifier(in_dim=(12, 16), hid_dim=(16, 32), out_dim=10, dropout=0.5)
    optimizer = torch.optim.Adamax(classifier.parameters())
    q_emb, v_emb = torch.randn(8, 12), torch.randn(8, 16)
    answers = torch.rand(8, 10)
    pred = classifier(q_emb, v_emb)  # called
    loss = nn.functional.binary_cross_entropy_with_logits(pred, answers)
    optimizer.zero_grad()
    loss.backward()  # fails
    optimizer.step()


if __name__ == "__main__":
    main()
