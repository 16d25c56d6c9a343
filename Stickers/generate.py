#!/usr/bin/python3
"""Draws every sticker package shipped with FaceRelay: procedural art rendered to PNG, plus each
package's sticker.json. Run from anywhere; writes into the folder this script sits in.

    /usr/bin/python3 Stickers/generate.py

Pictures are drawn four times larger and reduced, for smooth edges. Design coordinates in the
JSON are pixels of the final PNG. Landmark numbers are the iBUG 68-point indices: 17-26 brows,
27-30 nose bridge, 31-35 nostrils, 36-41 right eye, 42-47 left eye (the subject's), 48-67 lips.
"""
import json
import math
import os
import random

from PIL import Image, ImageDraw, ImageFilter

HERE = os.path.dirname(os.path.abspath(__file__))
SUPER = 4


class Canvas:
    def __init__(self, width, height):
        self.width, self.height = width, height
        self.image = Image.new("RGBA", (width * SUPER, height * SUPER), (0, 0, 0, 0))
        self.draw = ImageDraw.Draw(self.image)

    @staticmethod
    def s(values):
        return [v * SUPER for v in values]

    def ellipse(self, box, fill=None, outline=None, width=0):
        self.draw.ellipse(self.s(box), fill=fill, outline=outline, width=int(width * SUPER))

    def polygon(self, points, fill=None, outline=None, width=0):
        flat = [c * SUPER for p in points for c in p]
        self.draw.polygon(flat, fill=fill, outline=outline, width=int(width * SUPER) if outline else 0)

    def line(self, points, fill, width):
        flat = [c * SUPER for p in points for c in p]
        self.draw.line(flat, fill=fill, width=int(width * SUPER), joint="curve")

    def rounded(self, box, radius, fill=None, outline=None, width=0):
        self.draw.rounded_rectangle(self.s(box), radius=radius * SUPER, fill=fill, outline=outline, width=int(width * SUPER))

    def layer(self, other, blur=0):
        """Composites another canvas over this one, optionally blurred (glows)."""
        picture = other.image
        if blur:
            picture = picture.filter(ImageFilter.GaussianBlur(blur * SUPER))
        self.image = Image.alpha_composite(self.image, picture)
        self.draw = ImageDraw.Draw(self.image)

    def save(self, path):
        self.image.resize((self.width, self.height), Image.LANCZOS).save(path, optimize=True)


def heart(canvas, cx, cy, size, fill, outline=None):
    points = []
    for i in range(64):
        t = 2 * math.pi * i / 64
        x = 16 * math.sin(t) ** 3
        y = -(13 * math.cos(t) - 5 * math.cos(2 * t) - 2 * math.cos(3 * t) - math.cos(4 * t))
        points.append((cx + x * size / 32, cy + y * size / 32))
    canvas.polygon(points, fill=fill, outline=outline, width=2 if outline else 0)


def star(canvas, cx, cy, outer, inner, fill, rotation=0.0, points=5):
    corners = []
    for i in range(points * 2):
        radius = outer if i % 2 == 0 else inner
        angle = rotation + math.pi * i / points - math.pi / 2
        corners.append((cx + radius * math.cos(angle), cy + radius * math.sin(angle)))
    canvas.polygon(corners, fill=fill)


def package(name, title, description, items, pictures):
    """Writes the PNGs (name -> Canvas) and the sticker.json of one package."""
    folder = os.path.join(HERE, name)
    os.makedirs(folder, exist_ok=True)
    for old in os.listdir(folder):
        if old.endswith(".png") and old != "preview.png":
            os.remove(os.path.join(folder, old))
    for file, canvas in pictures.items():
        canvas.save(os.path.join(folder, file))
    with open(os.path.join(folder, "sticker.json"), "w") as out:
        json.dump({"title": title, "version": 1, "description": description, "items": items}, out, indent=2)
        out.write("\n")


def point(flag, x, y):
    return {"flag": flag, "x": x, "y": y}


# Sunglasses: two dark lenses on a bridge; turns with the head in 3D.
def sunglasses():
    c = Canvas(600, 220)
    frame = (20, 20, 24, 255)
    for cx in (165, 435):
        c.rounded((cx - 125, 40, cx + 125, 190), 60, fill=frame)
        c.rounded((cx - 112, 52, cx + 112, 178), 52, fill=(35, 45, 70, 235))
        c.line([(cx - 80, 75), (cx - 30, 65)], fill=(200, 220, 255, 150), width=9)
    c.line([(285, 82), (300, 70), (315, 82)], fill=frame, width=16)
    c.rounded((0, 60, 45, 84), 10, fill=frame)
    c.rounded((555, 60, 600, 84), 10, fill=frame)
    package("sunglasses", "Sunglasses", "Dark glasses that turn with the head (follow3D).", [{
        "id": "glasses", "frames": ["glasses.png"], "z": 0,
        "position": point([36, 39, 42, 45], 300, 112),
        "scale": {"pointA": point(36, 108, 112), "pointB": point(45, 492, 112)},
        "begin": "always", "follow3D": True,
    }], {"glasses.png": c})


# Cat: ears above the brows, a pink nose and whiskers, three items in z order.
def cat():
    ears = Canvas(640, 300)
    fur, inner = (120, 90, 70, 255), (240, 160, 170, 255)
    for flip in (1, -1):
        base = 320 - flip * 200
        ears.polygon([(base - 90, 290), (base - flip * 60, 20), (base + 90, 290)], fill=fur)
        ears.polygon([(base - 55, 270), (base - flip * 50, 75), (base + 55, 270)], fill=inner)
    nose = Canvas(160, 120)
    nose.polygon([(10, 20), (150, 20), (80, 110)], fill=(235, 120, 150, 255), outline=(120, 50, 70, 255), width=4)
    nose.ellipse((50, 28, 80, 48), fill=(255, 210, 220, 255))
    whiskers = Canvas(600, 200)
    for side in (-1, 1):
        for k, tilt in enumerate((-30, 0, 30)):
            x0 = 300 + side * 90
            whiskers.line([(x0, 100 + k * 20 - 20), (300 + side * 290, 100 + tilt)], fill=(30, 30, 30, 230), width=5)
    package("cat", "Cat", "Ears, nose and whiskers: three items drawn in z order.", [
        {"id": "ears", "frames": ["ears.png"], "z": 0,
         "position": point([19, 24], 320, 330),
         "scale": {"pointA": point(17, 120, 330), "pointB": point(26, 520, 330)}},
        {"id": "whiskers", "frames": ["whiskers.png"], "z": 1,
         "position": point(33, 300, 90),
         "scale": {"pointA": point(31, 255, 90), "pointB": point(35, 345, 90)}},
        {"id": "nose", "frames": ["nose.png"], "z": 2,
         "position": point(30, 80, 60),
         "scale": {"pointA": point(31, 30, 75), "pointB": point(35, 130, 75)}},
    ], {"ears.png": ears, "nose.png": nose, "whiskers.png": whiskers})


# Crown: gold with jewels, sitting above the brows; turns in 3D.
def crown():
    c = Canvas(500, 300)
    gold, dark = (240, 190, 40, 255), (160, 110, 10, 255)
    outline = [(20, 280), (20, 90), (110, 180), (170, 40), (250, 170), (330, 40), (390, 180), (480, 90), (480, 280)]
    c.polygon(outline, fill=gold, outline=dark, width=6)
    c.rounded((20, 230, 480, 285), 10, fill=dark)
    for x, colour in ((100, (200, 30, 60, 255)), (250, (40, 120, 220, 255)), (400, (30, 170, 80, 255))):
        c.ellipse((x - 20, 238, x + 20, 278), fill=colour, outline=(255, 240, 200, 255), width=3)
    for x, y in ((20, 90), (170, 40), (330, 40), (480, 90)):
        c.ellipse((x - 16, y - 16, x + 16, y + 16), fill=(255, 245, 220, 255))
    package("crown", "Crown", "A gold crown above the brows that turns with the head.", [{
        "id": "crown", "frames": ["crown.png"],
        "position": point([19, 24], 250, 390),
        "rotateCenter": [point(27, 250, 470)],
        "scale": {"pointA": point(17, 40, 390), "pointB": point(26, 460, 390)},
        "follow3D": True,
    }], {"crown.png": c})


# Moustache: a curled handlebar between the nose and the upper lip.
def moustache():
    c = Canvas(400, 140)
    colour = (60, 35, 20, 255)
    for side in (-1, 1):
        pts = []
        for i in range(41):
            t = i / 40
            x = 200 + side * (10 + 170 * t)
            y = 60 + 25 * math.sin(math.pi * t) - 45 * t ** 3
            pts.append((x, y))
        top = [(x, y - 28 * (1 - abs(2 * i / 40 - 0.6)) - 4) for i, (x, y) in enumerate(pts)]
        c.polygon(top + pts[::-1], fill=colour)
        tip = pts[-1]
        c.ellipse((tip[0] - 12, tip[1] - 22, tip[0] + 12, tip[1] + 2), fill=colour)
    package("moustache", "Moustache", "A handlebar moustache over the upper lip.", [{
        "id": "moustache", "frames": ["moustache.png"],
        "position": point([33, 51], 200, 62),
        "scale": {"pointA": point(48, 95, 70), "pointB": point(54, 305, 70)},
    }], {"moustache.png": c})


# Full beard: a per-feature region (the jaw line), seed 004's beard with width/height factors.
def beard():
    c = Canvas(500, 400)
    rng = random.Random(4)
    hair = Canvas(500, 400)
    hair.polygon([(10, 0), (60, 220), (150, 340), (250, 395), (350, 340), (440, 220), (490, 0), (420, 0),
                  (380, 170), (330, 150), (250, 140), (170, 150), (120, 170), (80, 0)], fill=(85, 50, 25, 255))
    c.layer(hair)
    for _ in range(900):
        x, y = rng.uniform(20, 480), rng.uniform(5, 390)
        if hair.image.getpixel((int(x * SUPER), int(y * SUPER)))[3] > 0:
            c.line([(x, y), (x + rng.uniform(-4, 4), y + rng.uniform(6, 14))], fill=(55, 30, 15, 200), width=2)
    c.ellipse((185, 175, 315, 245), fill=(0, 0, 0, 0))
    package("beard", "Full beard", "A full beard on the jaw region (per-feature placement).", [{
        "id": "beard", "frames": ["beard.png"],
        "region": {"feature": "jaw", "widthFactor": 1.08, "heightFactor": 0.78, "offsetX": 0, "offsetY": 0.2},
    }], {"beard.png": c})


# Hearts: a ring of hearts that pulses above the head while the face smiles.
def hearts():
    pictures, frames = {}, []
    for f in range(8):
        c = Canvas(600, 300)
        for k in range(5):
            angle = math.pi * (0.15 + 0.7 * k / 4)
            x, y = 300 - 240 * math.cos(angle), 250 - 190 * math.sin(angle)
            pulse = 1 + 0.25 * math.sin(2 * math.pi * (f / 8 + k / 5))
            heart(c, x, y - 10 * math.sin(2 * math.pi * f / 8), 70 * pulse, (235, 40, 90, 255), outline=(255, 200, 220, 255))
        name = f"hearts_{f}.png"
        pictures[name] = c
        frames.append(name)
    package("hearts", "Hearts on a smile", "Pulsing hearts above the head from a smile until the smile ends.", [{
        "id": "hearts", "frames": frames, "fps": 12, "loop": True,
        "position": point([19, 24], 300, 330),
        "scale": {"pointA": point(17, 110, 330), "pointB": point(26, 490, 330)},
        "begin": "smile", "end": "smile.end",
    }], pictures)


# Flames: fire pouring from an open mouth, flickering, until the mouth closes.
def flames():
    pictures, frames = {}, []
    rng = random.Random(7)
    for f in range(8):
        c = Canvas(300, 420)
        for colour, spread, length, blur in (((255, 80, 0, 230), 1.0, 1.0, 6), ((255, 170, 20, 240), 0.7, 0.8, 3), ((255, 245, 160, 255), 0.4, 0.55, 0)):
            layer = Canvas(300, 420)
            pts = [(150 - 40 * spread, 20)]
            for i in range(9):
                t = i / 8
                width = (40 + 110 * t) * spread
                wobble = 25 * math.sin(2 * math.pi * (f / 8) + 5 * t) + rng.uniform(-8, 8)
                pts.append((150 - width + wobble, 20 + 380 * length * t))
            pts.append((150 + wobble * 0.5, 20 + 400 * length))
            for i in range(8, -1, -1):
                t = i / 8
                width = (40 + 110 * t) * spread
                wobble = 25 * math.sin(2 * math.pi * (f / 8) + 5 * t + 1) + rng.uniform(-8, 8)
                pts.append((150 + width + wobble, 20 + 380 * length * t))
            layer.polygon(pts, fill=colour)
            c.layer(layer, blur=blur)
        name = f"flame_{f}.png"
        pictures[name] = c
        frames.append(name)
    package("flames", "Fire breath", "Flames from the mouth while it is open.", [{
        "id": "flames", "frames": frames, "fps": 15, "loop": True, "z": 1,
        "position": point([62, 66], 150, 30),
        "scale": {"pointA": point(60, 100, 30), "pointB": point(64, 200, 30)},
        "begin": "mouthOpen", "end": "mouthOpen.end",
    }], pictures)


# Stars: a burst beside each eye when that eye blinks, played once.
def stars():
    pictures, items = {}, []
    for side, flag, outer in (("left", [42, 43, 44, 45, 46, 47], 45), ("right", [36, 37, 38, 39, 40, 41], 36)):
        frames = []
        for f in range(10):
            c = Canvas(300, 300)
            grow = (f + 1) / 10
            for k in range(6):
                angle = 2 * math.pi * k / 6 + f * 0.15
                r = 30 + 110 * grow
                alpha = int(255 * (1 - max(0, grow - 0.6) / 0.4 * 0.9))
                star(c, 150 + r * math.cos(angle), 150 + r * math.sin(angle), 26, 11, (255, 220, 40, alpha), rotation=f * 0.3)
            star(c, 150, 150, 34 * (1.2 - grow * 0.5), 14, (255, 255, 220, 230), rotation=-f * 0.2)
            name = f"stars_{side}_{f}.png"
            pictures[name] = c
            frames.append(name)
        items.append({
            "id": f"stars_{side}", "frames": frames, "fps": 20, "loop": False,
            "position": point(flag, 150, 150),
            "scale": {"pointA": point(36 if side == "right" else 42, 90, 150), "pointB": point(39 if side == "right" else 45, 210, 150)},
            "begin": "blinkLeft" if side == "left" else "blinkRight",
        })
    package("stars", "Star blink", "A burst of stars around an eye when it blinks (played once).", items, pictures)


# Surprise: a two-step chain. An open mouth makes a ring pop; when the pop completes, confetti
# falls; the ring around the mouth stays until the confetti completes.
def surprise():
    pictures = {}
    ring = Canvas(300, 300)
    ring.ellipse((20, 20, 280, 280), outline=(255, 255, 255, 230), width=14)
    ring.ellipse((50, 50, 250, 250), outline=(120, 200, 255, 200), width=8)
    pictures["ring.png"] = ring
    pop_frames, confetti_frames = [], []
    for f in range(6):
        c = Canvas(400, 400)
        r = 40 + 30 * f
        for k in range(12):
            angle = 2 * math.pi * k / 12
            c.line([(200 + r * math.cos(angle), 200 + r * math.sin(angle)),
                    (200 + (r + 40) * math.cos(angle), 200 + (r + 40) * math.sin(angle))], fill=(255, 230, 60, 255 - 30 * f), width=10)
        name = f"pop_{f}.png"
        pictures[name] = c
        pop_frames.append(name)
    rng = random.Random(11)
    pieces = [(rng.uniform(20, 580), rng.uniform(-200, 0), rng.uniform(60, 140), rng.choice([(230, 60, 60), (60, 160, 230), (250, 210, 50), (90, 200, 90)])) for _ in range(40)]
    for f in range(12):
        c = Canvas(600, 500)
        for x, y0, speed, colour in pieces:
            y = y0 + speed * f * 0.5 + 60
            if 0 < y < 480:
                angle = f * 0.4 + x
                dx, dy = 10 * math.cos(angle), 6 * math.sin(angle)
                c.polygon([(x - dx, y - dy - 6), (x + dx, y + dy - 6), (x + dx, y + dy + 6), (x - dx, y - dy + 6)], fill=colour + (255,))
        name = f"confetti_{f}.png"
        pictures[name] = c
        confetti_frames.append(name)
    package("surprise", "Surprise chain", "mouthOpen pops a ring; pop.complete starts confetti; the ring stays until confetti.complete.", [
        {"id": "ring", "frames": ["ring.png"], "z": 0,
         "position": point([62, 66], 150, 150),
         "scale": {"pointA": point(48, 60, 150), "pointB": point(54, 240, 150)},
         "begin": "mouthOpen", "end": "confetti.complete"},
        {"id": "pop", "frames": pop_frames, "fps": 15, "loop": False, "z": 1,
         "position": point([62, 66], 200, 200),
         "scale": {"pointA": point(48, 140, 200), "pointB": point(54, 260, 200)},
         "begin": "mouthOpen"},
        {"id": "confetti", "frames": confetti_frames, "fps": 12, "loop": False, "z": 2,
         "position": point([19, 24], 300, 420),
         "scale": {"pointA": point(0, 60, 420), "pointB": point(16, 540, 420)},
         "begin": "pop.complete"},
    ], pictures)


# Carnival mask set: one item per facial feature, placed by region (seed 004's per-feature masks).
def carnival():
    pictures = {}
    for side in ("left", "right"):
        c = Canvas(200, 120)
        c.ellipse((5, 5, 195, 115), fill=(150, 40, 170, 220), outline=(255, 215, 0, 255), width=6)
        c.ellipse((55, 35, 145, 85), fill=(0, 0, 0, 0))
        pictures[f"eye_{side}.png"] = c
    brows = Canvas(400, 80)
    for x0 in (10, 230):
        brows.polygon([(x0, 60), (x0 + 80, 10), (x0 + 160, 40), (x0 + 150, 55), (x0 + 80, 30), (x0 + 10, 75)], fill=(255, 215, 0, 255))
    pictures["brows.png"] = brows
    nose = Canvas(120, 120)
    nose.ellipse((10, 10, 110, 110), fill=(230, 30, 40, 255))
    nose.ellipse((30, 25, 60, 50), fill=(255, 180, 180, 255))
    pictures["nose.png"] = nose
    lips = Canvas(240, 120)
    lips.ellipse((10, 15, 230, 105), fill=(200, 20, 70, 200))
    lips.line([(30, 60), (120, 52), (210, 60)], fill=(120, 0, 40, 255), width=6)
    pictures["lips.png"] = lips
    package("carnival", "Carnival mask set", "A mask per feature (eyes, brows, nose, lips), each sized from its own landmarks.", [
        {"id": "eye_left", "frames": ["eye_left.png"], "region": {"feature": "leftEye", "widthFactor": 1.8, "heightFactor": 3.2}},
        {"id": "eye_right", "frames": ["eye_right.png"], "region": {"feature": "rightEye", "widthFactor": 1.8, "heightFactor": 3.2}},
        {"id": "brows", "frames": ["brows.png"], "z": 1, "region": {"feature": "brows", "widthFactor": 1.1, "heightFactor": 1.4, "offsetY": -0.2}},
        {"id": "nose", "frames": ["nose.png"], "z": 1, "region": {"feature": "nose", "widthFactor": 0.9, "heightFactor": 0.45, "offsetY": 0.32}},
        {"id": "lips", "frames": ["lips.png"], "region": {"feature": "lips", "widthFactor": 1.2, "heightFactor": 1.5}},
    ], pictures)


# Nod and shake: a badge that shows for a second and a half after a nod ("yes") or a shake ("no").
def gestures():
    pictures = {}
    for name, colour, mark in (("yes", (40, 170, 80, 255), "tick"), ("no", (210, 50, 50, 255), "cross")):
        c = Canvas(200, 200)
        c.ellipse((8, 8, 192, 192), fill=colour, outline=(255, 255, 255, 255), width=10)
        if mark == "tick":
            c.line([(50, 105), (85, 140), (150, 65)], fill=(255, 255, 255, 255), width=22)
        else:
            c.line([(60, 60), (140, 140)], fill=(255, 255, 255, 255), width=22)
            c.line([(140, 60), (60, 140)], fill=(255, 255, 255, 255), width=22)
        pictures[f"{name}.png"] = c
    package("gestures", "Yes / no badges", "A tick for 1.5 s after a nod, a cross after a head shake.", [
        {"id": "yes", "frames": ["yes.png"], "loop": False, "duration": 1.5,
         "position": point(16, -40, 100), "scale": {"pointA": point(36, -140, 100), "pointB": point(45, 60, 100)},
         "begin": "nod"},
        {"id": "no", "frames": ["no.png"], "loop": False, "duration": 1.5,
         "position": point(16, -40, 100), "scale": {"pointA": point(36, -140, 100), "pointB": point(45, 60, 100)},
         "begin": "shake"},
    ], pictures)


if __name__ == "__main__":
    for make in (sunglasses, cat, crown, moustache, beard, hearts, flames, stars, surprise, carnival, gestures):
        make()
        print("drew", make.__name__)
