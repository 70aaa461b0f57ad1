"""Agent replies in each Kokoro language, the texts the Kokoro benchmarks speak."""

from __future__ import annotations

REPLIES_ZH: tuple[str, ...] = (
    "您好，欢迎致电客服中心。请问有什么可以帮您的吗？",
    "好的，我已经为您把会议改到明天下午三点。",
    "您的订单已经发货了，预计后天就能送到。",
    "抱歉，我没有听清楚。您能再说一遍联系人的名字吗？",
    "今天北京晴，最高气温二十六度，傍晚有小风，不需要带伞。",
    "我帮您查到了三家附近的川菜馆，最近的一家步行大约五分钟，晚上十点关门。需要我帮您订位吗？",
    "您的账户余额是两千三百元。上个月的话费已经自动扣除了。",
    "好的，已经把牛奶、鸡蛋和面包加到您的购物清单里了。",
)
"""Replies of one to three clauses, without digits or Latin letters (so that an ASR's
transcript compares character by character)."""

REPLIES_JA: tuple[str, ...] = (
    "お電話ありがとうございます。ご用件をお伺いします。",
    "かしこまりました。会議を明日の午後三時に変更しました。",
    "ご注文の商品は本日発送されました。明後日にはお届けできる予定です。",
    "申し訳ありません、よく聞き取れませんでした。もう一度お名前をお願いできますか？",
    "今日の東京は晴れで、最高気温は二十六度です。傘は必要ありません。",
    "近くのレストランを三軒見つけました。一番近いお店は歩いて五分ほどで、夜十時まで営業しています。",
    "承知しました。牛乳と卵とパンを買い物リストに追加しました。",
    "少々お待ちください。担当者におつなぎします。",
)

REPLIES_ES: tuple[str, ...] = (
    "Hola, gracias por llamar al servicio de atención al cliente. ¿En qué puedo ayudarle?",
    "De acuerdo, he cambiado la reunión a mañana por la tarde.",
    "Su pedido ya ha salido del almacén y llegará pasado mañana.",
    "Perdone, no le he entendido bien. ¿Puede repetir el nombre del contacto?",
    "Hoy en Madrid hace sol y buen tiempo. No hace falta llevar paraguas.",
    "He encontrado varios restaurantes cerca de usted. El más cercano está a pocos minutos a pie.",
    "La factura del mes pasado ya se ha cobrado de su cuenta.",
    "Muy bien, he añadido leche, huevos y pan a su lista de la compra.",
)
"""Spanish replies, the Mandarin ones' counterparts without numbers (Whisper writes a number
in these languages in digits, which a character error rate against words would count)."""

REPLIES_FR: tuple[str, ...] = (
    "Bonjour, merci d'avoir appelé le service client. Comment puis-je vous aider ?",
    "Très bien, j'ai déplacé la réunion à demain après-midi.",
    "Votre commande a été expédiée et arrivera après-demain.",
    "Pardon, je n'ai pas bien compris. Pouvez-vous répéter le nom du contact ?",
    "Aujourd'hui à Paris, il fait beau et doux. Pas besoin de parapluie.",
    "J'ai trouvé plusieurs restaurants près de chez vous. Le plus proche est tout près.",
    "La facture du mois dernier a déjà été prélevée sur votre compte.",
    "C'est noté, j'ai ajouté du lait, des œufs et du pain à votre liste de courses.",
)
"""French replies, the Mandarin ones' counterparts."""

REPLIES_IT: tuple[str, ...] = (
    "Buongiorno, grazie per aver chiamato il servizio clienti. Come posso aiutarla?",
    "D'accordo, ho spostato la riunione a domani pomeriggio.",
    "Il suo ordine è stato spedito e arriverà dopodomani.",
    "Mi scusi, non ho capito bene. Può ripetere il nome del contatto?",
    "Oggi a Roma c'è il sole e fa caldo. Non serve l'ombrello.",
    "Ho trovato alcuni ristoranti vicino a lei. Il più vicino è a pochi minuti a piedi.",
    "La bolletta del mese scorso è già stata addebitata sul suo conto.",
    "Perfetto, ho aggiunto latte, uova e pane alla sua lista della spesa.",
)
"""Italian replies, the Mandarin ones' counterparts."""

REPLIES_PT: tuple[str, ...] = (
    "Olá, obrigado por ligar para o atendimento ao cliente. Como posso ajudar?",
    "Tudo bem, mudei a reunião para amanhã à tarde.",
    "O seu pedido já foi enviado e deve chegar depois de amanhã.",
    "Desculpe, não entendi bem. Pode repetir o nome do contato?",
    "Hoje em São Paulo faz sol e calor. Não precisa de guarda-chuva.",
    "Encontrei alguns restaurantes perto de você. O mais próximo fica a poucos minutos a pé.",
    "A fatura do mês passado já foi debitada da sua conta.",
    "Certo, coloquei leite, ovos e pão na sua lista de compras.",
)
"""Brazilian Portuguese replies, the Mandarin ones' counterparts."""

REPLIES_BY_LANGUAGE: dict[str, tuple[str, ...]] = {
    "zh": REPLIES_ZH, "ja": REPLIES_JA, "es": REPLIES_ES, "fr": REPLIES_FR, "it": REPLIES_IT,
    "pt": REPLIES_PT,
}  # fmt: skip
"""Each Kokoro language's replies, by its primary subtag."""
