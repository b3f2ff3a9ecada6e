"""StreamPETR head in stream training: the top-k decoded queries of each frame are pushed into the memory queue without .detach().

Source: https://github.com/exiawsh/StreamPETR/issues/63
Thread: A user asked why post_update_memory in streampetr_head.py detaches rec_memory (and the reference points and velocities) before pushing them into the memory bank that the next frame's queries attend to. The maintainer answered that the memory tensor needs to be detached in stream training because otherwise training fails with "Trying to backward through the graph a second time, but the buffers have already been freed": each frame does its own backward and optimizer step, and the queue would carry the previous frame's graph into the next frame's loss. (Only sliding-window training, which backpropagates all frames at once, can do without the detach.)
Cause: CARRIED
Fix: Detach what goes into the memory queue (rec_memory = topk_gather(rec_memory, topk_indexes).detach()), so each frame's backward stops at the stored queries.
Fix mentions: detach()
Fix must not say: retain_graph=True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def memory_refresh(memory, prev_exist):
    memory_shape = memory.shape
    view_shape = [1 for _ in range(len(memory_shape))]
    prev_exist = prev_exist.view(-1, *view_shape[1:])
    return memory * prev_exist


def topk_gather(feat, topk_indexes):
    if topk_indexes is not None:
        feat_shape = feat.shape
        topk_shape = topk_indexes.shape
        view_shape = [1 for _ in range(len(feat_shape))]
        view_shape[:2] = topk_shape[:2]
        topk_indexes = topk_indexes.view(*view_shape)
        feat = torch.gather(feat, 1, topk_indexes.repeat(1, 1, *feat_shape[2:]))
    return feat


class StreamPETRHead(nn.Module):
    def __init__(self, num_classes=3, embed_dims=16, num_query=8, memory_len=12, topk_proposals=4,
                 num_propagated=4):
        super().__init__()
        self.embed_dims, self.num_query, self.memory_len = embed_dims, num_query, memory_len
        self.topk_proposals, self.num_propagated = topk_proposals, num_propagated
        self.memory_embed = nn.Sequential(nn.Linear(embed_dims, embed_dims), nn.ReLU(),
                                          nn.Linear(embed_dims, embed_dims))
        self.reference_points = nn.Embedding(num_query, 3)
        self.query_embedding = nn.Sequential(nn.Linear(3, embed_dims), nn.ReLU(), nn.Linear(embed_dims, embed_dims))
        self.transformer = nn.MultiheadAttention(embed_dims, 2, batch_first=True)
        self.cls_branch = nn.Linear(embed_dims, num_classes)
        self.reg_branch = nn.Sequential(nn.Linear(embed_dims, embed_dims), nn.ReLU(), nn.Linear(embed_dims, 3))
        self.reset_memory()

    def reset_memory(self):
        self.memory_embedding = None
        self.memory_reference_point = None

    def pre_update_memory(self, data):
        x = data['prev_exists']
        B = x.size(0)
        # refresh the memory when the scene changes
        if self.memory_embedding is None:
            self.memory_embedding = x.new_zeros(B, self.memory_len, self.embed_dims)
            self.memory_reference_point = x.new_zeros(B, self.memory_len, 3)
        else:
            self.memory_reference_point = memory_refresh(self.memory_reference_point[:, :self.memory_len], x)
            self.memory_embedding = memory_refresh(self.memory_embedding[:, :self.memory_len], x)

    def post_update_memory(self, all_cls_scores, all_bbox_preds, outs_dec):
        rec_reference_points = all_bbox_preds[..., :3][-1]
        rec_memory = outs_dec[-1]
        rec_score = all_cls_scores[-1].sigmoid().topk(1, dim=-1).values[..., 0:1]
        # topk proposals
        _, topk_indexes = torch.topk(rec_score, self.topk_proposals, dim=1)
        rec_reference_points = topk_gather(rec_reference_points, topk_indexes).detach()
        rec_memory = topk_gather(rec_memory, topk_indexes)
        self.memory_embedding = torch.cat([rec_memory, self.memory_embedding], dim=1)  # stored
        self.memory_reference_point = torch.cat([rec_reference_points, self.memory_reference_point], dim=1)

    def temporal_alignment(self, query_pos, tgt, reference_points):
        temp_pos = self.query_embedding(self.memory_reference_point)
        temp_memory = self.memory_embedding
        tgt = torch.cat([tgt, temp_memory[:, :self.num_propagated]], dim=1)
        query_pos = torch.cat([query_pos, temp_pos[:, :self.num_propagated]], dim=1)
        reference_points = torch.cat([reference_points, self.memory_reference_point[:, :self.num_propagated]], dim=1)
        return tgt, query_pos, reference_points, temp_memory[:, self.num_propagated:], temp_pos[:, self.num_propagated:]

    def forward(self, **data):
        # zero init the memory bank
        self.pre_update_memory(data)
        x = data['img_feats']
        B = x.size(0)
        memory = self.memory_embed(x)
        reference_points = self.reference_points.weight.unsqueeze(0).repeat(B, 1, 1)
        query_pos = self.query_embedding(reference_points)
        tgt = torch.zeros_like(query_pos)
        tgt, query_pos, reference_points, temp_memory, temp_pos = self.temporal_alignment(query_pos, tgt,
                                                                                          reference_points)
        key = torch.cat([memory, temp_memory], dim=1)
        out, _ = self.transformer(tgt + query_pos, key, key)  # made
        outs_dec = out.unsqueeze(0)
        all_cls_scores = self.cls_branch(outs_dec)
        all_bbox_preds = (self.reg_branch(outs_dec) + reference_points).sigmoid()
        # update the memory bank
        self.post_update_memory(all_cls_scores, all_bbox_preds, outs_dec)
        return {'all_cls_scores': all_cls_scores, 'all_bbox_preds': all_bbox_preds}


def main():
    torch.manual_seed(0)
    head = StreamPETRHead()
    optimizer = torch.optim.AdamW(head.parameters(), lr=2e-4)
    prev_exists = torch.zeros(2)
    for frame in range(3):
        data = {'img_feats': torch.randn(2, 10, 16), 'prev_exists': prev_exists}
        outs = head(**data)  # called
        gt_labels = torch.randint(0, 2, outs['all_cls_scores'].shape).float()
        gt_bboxes = torch.rand(outs['all_bbox_preds'].shape)
        loss = (F.binary_cross_entropy_with_logits(outs['all_cls_scores'], gt_labels)
                + F.l1_loss(outs['all_bbox_preds'], gt_bboxes))
        optimizer.zero_grad()
        loss.backward()  # freed fails
        optimizer.step()
        prev_exists = torch.ones(2)


if __name__ == "__main__":
    main()
